/// A transformation between a connection's socket bytes and its handler's bytes, such as TLS: the layer sees
/// every byte read from the socket and every byte written to it, so the handler and its protocol stay as they
/// are. Loop-confined like its ``Connection``; installed before the connection starts.
public protocol StreamLayer: AnyObject {
    /// Bytes arrived from the socket: put what the handler should read into `output.forHandler` and what must
    /// go back to the peer (handshake records, say) into `output.forPeer`.
    func received(_ bytes: UnsafeRawBufferPointer, into output: inout StreamLayerOutput)
    /// The handler writes `bytes`: put what goes to the socket into `output.forPeer`.
    func send(_ bytes: UnsafeRawBufferPointer, into output: inout StreamLayerOutput)
    /// The connection is about to shut down its side: put any closing bytes (a TLS close_notify) into
    /// `output.forPeer`.
    func finish(into output: inout StreamLayerOutput)
}

/// What a ``StreamLayer`` step produced.
public struct StreamLayerOutput {
    /// Bytes for the socket, sent in order before anything later.
    public var forPeer: [UInt8] = []
    /// Bytes for the handler.
    public var forHandler: [UInt8] = []
    /// Set when the stream cannot go on: the connection sends `forPeer`, then closes with this reason.
    public var failure: String?

    /// Nothing yet.
    public init() {}
}
