import Foundation
import HealthModel

#if canImport(Glibc)
    import Glibc
#endif

/// Runs another program to completion and reports its wall time and peak memory, for benchmarks of a tool's
/// whole process (`hkbench import` runs the real `hkq`).
enum ChildProcess {
    /// How one run went.
    struct Outcome {
        /// The exit status (128 + signal number when killed by a signal).
        var status: Int32
        /// Wall-clock seconds from spawn to exit.
        var seconds: Double
        /// Peak resident memory: the largest `VmHWM` (the kernel's high-water mark of the program's own memory)
        /// read from `/proc/PID/status` every few milliseconds until it exits, in bytes. (`ru_maxrss` from
        /// `wait4` is no use here: Linux carries the parent's high-water mark into it when the child execs.)
        var peakResidentBytes: Int
        /// Everything the program wrote to standard output.
        var output: String
        /// CPU seconds the program used, user and system (from `wait4`'s resource usage).
        var cpuSeconds: Double = 0
    }

    /// A built product beside this executable, e.g. `hkq` next to `hkbench`.
    static func sibling(_ name: String) throws -> String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HealthError(.internalError, "\(name) is not built beside hkbench (\(path)); build the package first")
        }
        return path
    }

    /// Runs `path` with `arguments`, standard output into a temporary file, standard error inherited; blocks
    /// until it exits.
    static func run(_ path: String, _ arguments: [String]) throws -> Outcome {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("hkbench-\(UUID()).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let clock = ContinuousClock()
        let started = clock.now
        let pid = try spawn(path, arguments, output: outputPath, flags: O_WRONLY | O_CREAT | O_TRUNC)
        var status: Int32 = 0
        var peak = 0
        var usage = rusage()
        while true {
            let waited = wait4(pid, &status, WNOHANG, &usage)
            if waited == pid { break }
            guard waited == 0 || errno == EINTR else {
                throw HealthError(.internalError, "waitpid failed: errno \(errno)")
            }
            peak = max(peak, highWaterMark(of: pid))
            usleep(2_000)
        }
        let elapsed = started.duration(to: clock.now)
        let exited = status & 0x7f == 0
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Outcome(
            status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f),
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18,
            peakResidentBytes: peak, output: output, cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }

    /// One timed run of a short program.
    struct Timing {
        /// Wall-clock seconds from spawn to exit.
        var seconds: Double
        /// CPU seconds the program used, user and system.
        var cpuSeconds: Double
    }

    /// Runs `path` with `arguments`, standard output to `/dev/null`, and waits for it in one blocking `wait4`
    /// (``run(_:_:)`` polls every 2 ms for the peak memory, too coarse for a program that lasts milliseconds).
    /// Throws when it cannot start or does not exit with status 0.
    static func time(_ path: String, _ arguments: [String]) throws -> Timing {
        let clock = ContinuousClock()
        let started = clock.now
        let pid = try spawn(path, arguments, output: "/dev/null", flags: O_WRONLY)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) != pid {
            guard errno == EINTR else { throw HealthError(.internalError, "wait4 failed: errno \(errno)") }
        }
        let elapsed = started.duration(to: clock.now)
        guard status == 0 else {
            throw HealthError(.internalError, "\(path) \(arguments.joined(separator: " ")) ended with status \(status)")
        }
        return Timing(
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18,
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }

    /// Starts `path` with `arguments` and this process's environment, standard output to the file at `output`
    /// opened with `flags` (created 0600), standard error inherited.
    private static func spawn(_ path: String, _ arguments: [String], output: String, flags: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, flags, 0o600)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw HealthError(.internalError, "cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        return pid
    }

    /// CPU seconds this process has used so far, user and system (every thread: an in-process server's too).
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    private static func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }

    /// `VmHWM` of a running process in bytes; 0 once it has exited.
    static func highWaterMark(of pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
