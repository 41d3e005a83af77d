// Every syscall HealthPosix makes, in one place: errno is read immediately after the call, EINTR is retried,
// EAGAIN comes back as `.wouldBlock`, and every other failure throws a `SystemError` naming the call.
//
// Outside this file, by design: the pthread primitives, which report errors by return value rather than errno
// (PosixThread, ConditionLock, EventLoop's thread identity; HealthEngine's ReadWriteLocked, the one lock outside
// HealthPosix, wraps a pthread rwlock), and getaddrinfo, which has its own error codes and result list
// (SocketAddress.resolve).
import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: its errno, the name of the call and the C library's message for it.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The errno value (or, for `getaddrinfo`, its EAI_* code).
    public let code: Int32
    /// The call that failed, such as `"connect"` or `"open(/tmp/x)"`.
    public let call: String
    /// The C library's description of `code`.
    public let message: String

    /// Makes an error for `call` failing with `errno`, taking the message from `strerror`.
    public init(errno: Int32, call: String) {
        self.code = errno
        self.call = call
        self.message = String(cString: strerror(errno))
    }

    /// Makes an error with an explicit message (for calls that do not report through errno).
    init(code: Int32, call: String, message: String) {
        self.code = code
        self.call = call
        self.message = message
    }

    /// Whether the call gave up because its timeout expired.
    public var isTimeout: Bool { code == ETIMEDOUT }

    /// `call: message (errno N)`.
    public var description: String { "\(call): \(message) (errno \(code))" }
}

/// The outcome of a non-blocking call: it did its work, or it would have had to block.
public enum IOResult<Value: Sendable>: Sendable {
    /// The call completed with this value.
    case processed(Value)
    /// The call could not proceed without blocking (EAGAIN/EWOULDBLOCK); try again when the fd is ready.
    case wouldBlock
}

extension IOResult: Equatable where Value: Equatable {}

/// Thin wrappers over the system calls; nothing outside this file calls Glibc's I/O functions directly.
enum Sys {
    // MARK: Retry helpers

    /// Runs `body` until it does not fail with EINTR; throws on any other failure.
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ call: @autoclosure () -> String, _ body: () -> T) throws(SystemError) -> T
    {
        while true {
            let result = body()
            if result >= 0 { return result }
            let error = errno
            if error == EINTR { continue }
            throw SystemError(errno: error, call: call())
        }
    }

    /// Like `retrying`, but EAGAIN/EWOULDBLOCK become `.wouldBlock`.
    @inline(__always)
    static func nonBlocking<T: BinaryInteger & Sendable>(
        _ call: @autoclosure () -> String, _ body: () -> T
    ) throws(SystemError) -> IOResult<T> {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK { return .wouldBlock }
            throw SystemError(errno: error, call: call())
        }
    }

    // MARK: Descriptors

    /// close(2). Never retried: on Linux the descriptor is released even when close reports EINTR.
    static func close(_ fd: Int32) throws(SystemError) {
        if Glibc.close(fd) < 0 {
            let error = errno
            if error != EINTR { throw SystemError(errno: error, call: "close") }
        }
    }

    /// read(2) into `buffer`; 0 means end of file.
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try nonBlocking("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// write(2) of `buffer`; may write fewer bytes than asked.
    static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try nonBlocking("write") { Glibc.write(fd, buffer.baseAddress, buffer.count) }
    }

    /// pread(2) at `offset`; 0 means end of file.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, offset: Int64) throws(SystemError) -> Int {
        try retrying("pread") { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// pwrite(2) at `offset`; may write fewer bytes than asked.
    static func pwrite(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, offset: Int64) throws(SystemError) -> Int {
        try retrying("pwrite") { Glibc.pwrite(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    // MARK: Randomness

    /// getrandom(2) into `buffer`: how many bytes it filled (at least one, unless `buffer` is empty).
    static func getRandom(_ buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retrying("getrandom") { hk_getrandom(base, UInt(buffer.count)) }
    }

    // MARK: Sockets

    /// socket(2), always non-blocking and close-on-exec.
    static func socket(domain: Int32) throws(SystemError) -> Int32 {
        try retrying("socket") { Glibc.socket(domain, HK_SOCK_STREAM | HK_SOCK_NONBLOCK | HK_SOCK_CLOEXEC, 0) }
    }

    /// setsockopt(2) with an `Int32` value.
    static func setSocketOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(SystemError) {
        var value = value
        _ = try retrying("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// SO_LINGER on with a zero timeout: the next close(2) resets the connection (RST) instead of closing it.
    static func setAbortiveClose(_ fd: Int32) throws(SystemError) {
        var value = linger(l_onoff: 1, l_linger: 0)
        _ = try retrying("setsockopt") {
            Glibc.setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
        }
    }

    /// The pending error of a socket (getsockopt SO_ERROR), 0 when none.
    static func socketError(_ fd: Int32) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try retrying("getsockopt") { Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) }
        return value
    }

    /// bind(2).
    static func bind(_ fd: Int32, _ address: SocketAddress) throws(SystemError) {
        _ = try retrying("bind(\(address))") {
            address.withSockAddr { pointer, length in Glibc.bind(fd, pointer, length) }
        }
    }

    /// listen(2).
    static func listen(_ fd: Int32, backlog: Int32) throws(SystemError) {
        _ = try retrying("listen") { Glibc.listen(fd, backlog) }
    }

    /// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; `.wouldBlock` when no connection is pending.
    static func accept(_ fd: Int32) throws(SystemError) -> IOResult<(Int32, SocketAddress)> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = try withUnsafeMutablePointer(to: &storage) { (pointer) throws(SystemError) -> IOResult<Int32> in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemError) in
                try nonBlocking("accept4") { hk_accept4(fd, address, &length, HK_SOCK_NONBLOCK | HK_SOCK_CLOEXEC) }
            }
        }
        switch result {
        case .wouldBlock: return .wouldBlock
        case .processed(let client): return .processed((client, SocketAddress(storage: storage, length: length)))
        }
    }

    /// connect(2) on a non-blocking socket: true when connected at once, false when in progress (EINPROGRESS).
    static func connect(_ fd: Int32, _ address: SocketAddress) throws(SystemError) -> Bool {
        while true {
            let result = address.withSockAddr { pointer, length in Glibc.connect(fd, pointer, length) }
            if result == 0 { return true }
            let error = errno
            if error == EINPROGRESS { return false }
            if error == EINTR { return false }  // the connection continues asynchronously
            throw SystemError(errno: error, call: "connect(\(address))")
        }
    }

    /// getsockname(2) or getpeername(2).
    static func socketAddress(_ fd: Int32, peer: Bool) throws(SystemError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { (pointer) throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemError) in
                try retrying(peer ? "getpeername" : "getsockname") {
                    peer ? Glibc.getpeername(fd, address, &length) : Glibc.getsockname(fd, address, &length)
                }
            }
        }
        return SocketAddress(storage: storage, length: length)
    }

    /// send(2) with MSG_NOSIGNAL, so a dead peer gives EPIPE instead of raising SIGPIPE.
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try nonBlocking("send") { Glibc.send(fd, buffer.baseAddress, buffer.count, HK_MSG_NOSIGNAL) }
    }

    /// recv(2); 0 means the peer closed its side.
    static func receive(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        try nonBlocking("recv") { Glibc.recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// shutdown(2); ENOTCONN (the peer is already gone) is not an error.
    /// `SHUT_WR` and `SHUT_RDWR` (Linux values): Glibc's enum constants are not visible in release builds.
    static let shutWrite: Int32 = 1
    static let shutBoth: Int32 = 2

    static func shutdown(_ fd: Int32, how: Int32) throws(SystemError) {
        if Glibc.shutdown(fd, how) < 0 {
            let error = errno
            if error != ENOTCONN { throw SystemError(errno: error, call: "shutdown") }
        }
    }

    /// poll(2) on one descriptor; returns the events that occurred, empty when the timeout expired.
    /// A negative `timeoutMilliseconds` waits forever. EINTR returns an empty result (callers recheck deadlines).
    static func pollOne(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32) throws(SystemError) -> Int16 {
        var revents: Int16 = 0
        let result = hk_poll_one(fd, events, timeoutMilliseconds, &revents)
        if result < 0 {
            let error = errno
            if error == EINTR { return 0 }
            throw SystemError(errno: error, call: "poll")
        }
        return result == 0 ? 0 : revents
    }

    // MARK: epoll and eventfd

    /// epoll_create1(EPOLL_CLOEXEC).
    static func epollCreate() throws(SystemError) -> Int32 {
        try retrying("epoll_create1") { hk_epoll_create() }
    }

    /// epoll_ctl(2) with a token stored in the event's data.
    static func epollControl(_ epfd: Int32, op: Int32, fd: Int32, events: UInt32, token: UInt64) throws(SystemError) {
        _ = try retrying("epoll_ctl") { hk_epoll_ctl(epfd, op, fd, events, token) }
    }

    /// epoll_wait(2); returns the number of ready entries (0 on timeout or EINTR).
    static func epollWait(
        _ epfd: Int32, tokens: UnsafeMutablePointer<UInt64>, events: UnsafeMutablePointer<UInt32>, max: Int32,
        timeoutMilliseconds: Int32
    ) throws(SystemError) -> Int {
        let result = hk_epoll_wait(epfd, tokens, events, max, timeoutMilliseconds)
        if result < 0 {
            let error = errno
            if error == EINTR { return 0 }
            throw SystemError(errno: error, call: "epoll_wait")
        }
        return Int(result)
    }

    /// eventfd(2), non-blocking and close-on-exec.
    static func eventFD() throws(SystemError) -> Int32 {
        try retrying("eventfd") { hk_eventfd(0, HK_EFD_NONBLOCK | HK_EFD_CLOEXEC) }
    }

    /// Adds one to an eventfd counter (waking its reader); a full counter already means "wake".
    static func eventFDSignal(_ fd: Int32) throws(SystemError) {
        var one: UInt64 = 1
        _ = try withUnsafeBytes(of: &one) { (bytes) throws(SystemError) in try write(fd, bytes) }
    }

    /// Resets an eventfd counter to zero.
    static func eventFDDrain(_ fd: Int32) throws(SystemError) {
        var value: UInt64 = 0
        _ = try withUnsafeMutableBytes(of: &value) { (bytes) throws(SystemError) in try read(fd, bytes) }
    }

    // MARK: Files

    /// open(2) with O_CLOEXEC added.
    static func open(_ path: String, flags: Int32, mode: UInt32) throws(SystemError) -> Int32 {
        try retrying("open(\(path))") { Glibc.open(path, flags | O_CLOEXEC, mode_t(mode)) }
    }

    /// fsync(2).
    static func fsync(_ fd: Int32) throws(SystemError) {
        _ = try retrying("fsync") { Glibc.fsync(fd) }
    }

    /// fdatasync(2).
    static func fdatasync(_ fd: Int32) throws(SystemError) {
        _ = try retrying("fdatasync") { Glibc.fdatasync(fd) }
    }

    /// ftruncate(2).
    static func ftruncate(_ fd: Int32, length: Int64) throws(SystemError) {
        _ = try retrying("ftruncate") { Glibc.ftruncate(fd, off_t(length)) }
    }

    /// fstat(2).
    static func fileStatus(_ fd: Int32) throws(SystemError) -> stat {
        var info = stat()
        _ = try retrying("fstat") { Glibc.fstat(fd, &info) }
        return info
    }

    /// stat(2), or lstat(2) when `followLinks` is false; nil when the path does not exist.
    static func statPath(_ path: String, followLinks: Bool = true) throws(SystemError) -> stat? {
        var info = stat()
        while true {
            if callStat(path, &info, followLinks: followLinks) == 0 { return info }
            let error = errno
            if error == EINTR { continue }
            if error == ENOENT { return nil }
            throw SystemError(errno: error, call: "stat(\(path))")
        }
    }

    /// flock(2); false when `nonBlocking` and another open file description holds a conflicting lock.
    static func flock(_ fd: Int32, operation: Int32) throws(SystemError) -> Bool {
        switch try nonBlocking("flock", { hk_flock(fd, operation) }) {
        case .processed: return true
        case .wouldBlock: return false
        }
    }

    /// geteuid(2).
    static func effectiveUserID() -> UInt32 { UInt32(Glibc.geteuid()) }

    /// realpath(3): `path` with every symbolic link, `.` and `..` resolved; the path must exist.
    static func realPath(_ path: String) throws(SystemError) -> String {
        guard let resolved = Glibc.realpath(path, nil) else {
            throw SystemError(errno: errno, call: "realpath(\(path))")
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// rename(2).
    static func rename(_ from: String, _ to: String) throws(SystemError) {
        _ = try retrying("rename(\(from), \(to))") { Glibc.rename(from, to) }
    }

    /// unlink(2).
    static func unlink(_ path: String) throws(SystemError) {
        _ = try retrying("unlink(\(path))") { Glibc.unlink(path) }
    }

    /// mkdir(2); false when the path already exists.
    static func mkdir(_ path: String, mode: UInt32) throws(SystemError) -> Bool {
        while true {
            if Glibc.mkdir(path, mode_t(mode)) == 0 { return true }
            let error = errno
            if error == EINTR { continue }
            if error == EEXIST { return false }
            throw SystemError(errno: error, call: "mkdir(\(path))")
        }
    }

    /// rmdir(2).
    static func rmdir(_ path: String) throws(SystemError) {
        _ = try retrying("rmdir(\(path))") { Glibc.rmdir(path) }
    }

    /// mkdtemp(3): creates a fresh directory from a template ending in XXXXXX and returns its path.
    static func makeTemporaryDirectory(template: String) throws(SystemError) -> String {
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw SystemError(errno: errno, call: "mkdtemp(\(template))") }
        return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// chmod(2).
    static func chmod(_ path: String, mode: UInt32) throws(SystemError) {
        _ = try retrying("chmod(\(path))") { Glibc.chmod(path, mode_t(mode)) }
    }

    /// The entry names of a directory, without "." and "..", in no particular order.
    static func listDirectory(_ path: String) throws(SystemError) -> [String] {
        guard let directory = opendir(path) else { throw SystemError(errno: errno, call: "opendir(\(path))") }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                let error = errno
                if error != 0 { throw SystemError(errno: error, call: "readdir(\(path))") }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    // MARK: Signals and time

    /// Blocks `signals` in the calling thread (threads it starts afterwards inherit the mask).
    static func blockSignals(_ signals: [Int32]) throws(SystemError) {
        let result = signals.withUnsafeBufferPointer { hk_block_signals($0.baseAddress, Int32($0.count)) }
        if result != 0 { throw SystemError(errno: result, call: "pthread_sigmask") }
    }

    /// Waits until one of `signals` (which must be blocked) is pending and returns it.
    static func waitForSignal(_ signals: [Int32]) throws(SystemError) -> Int32 {
        var received: Int32 = 0
        while true {
            let result = signals.withUnsafeBufferPointer { hk_sigwait($0.baseAddress, Int32($0.count), &received) }
            if result == 0 { return received }
            if result == EINTR { continue }
            throw SystemError(errno: result, call: "sigwait")
        }
    }

    /// Waits up to `timeout` until one of `signals` (which must be blocked) is pending and returns it; `nil` when
    /// none came in time.
    static func waitForSignal(_ signals: [Int32], timeout: Duration) throws(SystemError) -> Int32? {
        let deadline = monotonicNanoseconds().addingReportingOverflow(timeout.clampedNanoseconds)
        let end = deadline.overflow ? UInt64.max : deadline.partialValue
        while true {
            let now = monotonicNanoseconds()
            let left = Int64(clamping: end > now ? end - now : 0)
            let result = signals.withUnsafeBufferPointer { hk_sigtimedwait($0.baseAddress, Int32($0.count), left) }
            if result > 0 { return result }
            if result == 0 { return nil }
            if result == -EINTR { continue }
            throw SystemError(errno: -result, call: "sigtimedwait")
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// stat(2) or lstat(2) under a name that does not collide with the `stat` struct inside `Sys`.
private func callStat(_ path: String, _ info: inout stat, followLinks: Bool) -> Int32 {
    followLinks ? stat(path, &info) : lstat(path, &info)
}
