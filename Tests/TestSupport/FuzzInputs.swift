/// Bytes written as hex, spaces and line breaks ignored: how regression tests hold the inputs the fuzz harnesses
/// of Fuzz/ found crashing.
public func fuzzBytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8.filter { $0 != 0x20 && $0 != 0x0A })
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: digits.count, by: 2).map { i in
        UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16)!
    }
}
