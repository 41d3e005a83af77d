import Foundation
import Synchronization

/// Runs async work (the client's API) from a command's synchronous `run` and waits for its result.
///
/// Blocks the calling thread, which must not be a thread of the cooperative pool (commands run on the main
/// thread, so this holds).
enum AsyncBridge {
    /// The result of `work`, run as a detached task; rethrows its error.
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                box.set(.success(try await work()))
            } catch {
                box.set(.failure(error))
            }
            done.signal()
        }
        done.wait()
        return try box.get()
    }
}

/// One result handed from a task to a waiting thread.
private final class ResultBox<T: Sendable>: Sendable {
    private let result = Mutex<Result<T, any Error>?>(nil)

    func set(_ value: Result<T, any Error>) { result.withLock { $0 = value } }

    func get() throws -> T {
        guard let value = result.withLock({ $0 }) else { throw CancellationError() }
        return try value.get()
    }
}
