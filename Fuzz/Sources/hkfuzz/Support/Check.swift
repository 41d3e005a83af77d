import Foundation

/// Stops the run when an invariant fails, so libFuzzer saves the input as a crash: decoders must never trap on
/// input, but a round trip that changes a value is a bug too.
func require(
    _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    guard !condition else { return }
    FileHandle.standardError.write(Data("hkfuzz invariant failed at \(file):\(line): \(message())\n".utf8))
    fatalError("invariant failed", file: file, line: line)
}

/// Runs `body`, ignoring any error it throws: malformed input failing cleanly is the expected outcome. Returns
/// the value on success.
@discardableResult
func attempt<T>(_ body: () throws -> T) -> T? {
    try? body()
}

/// Lowercase hex of `bytes`, for messages.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { byte in
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }.joined()
}
