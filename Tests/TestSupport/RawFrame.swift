/// Frame bytes made by hand, for tests that send what no encoder would.
public enum RawFrame {
    /// A frame header (PROTOCOL.md, Framing) of message kind `kind` with `flags`, request id 7, declaring a payload
    /// of `length` bytes.
    public static func header(kind: UInt8, flags: UInt8 = 0, length: UInt32) -> [UInt8] {
        var bytes: [UInt8] = [0x48, 0x4B, 1, kind, flags, 0, 0, 0, 7, 0, 0, 0]
        withUnsafeBytes(of: length.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }
}
