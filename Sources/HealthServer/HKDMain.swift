import Foundation
import HealthModel
import HealthPosix

/// The `hkd` program: parse flags, start the server, stop it cleanly on SIGINT or SIGTERM.
public enum HKDMain {
    /// Runs hkd with the process's arguments and exits: 0 after a clean stop, 64 on bad usage, 1 on failure.
    /// `http` serves `--http-listen`.
    public static func main(http: any HTTPService) -> Never {
        exit(run(Array(CommandLine.arguments.dropFirst()), http: http))
    }

    static func run(_ arguments: [String], http: any HTTPService) -> Int32 {
        let configuration: ServerConfiguration
        do {
            switch try ServerConfiguration.parse(arguments, environment: ProcessInfo.processInfo.environment) {
            case .help:
                print(ServerConfiguration.usage)
                return 0
            case .version:
                print(HealthServer.version)
                return 0
            case .run(let parsed):
                configuration = parsed
            }
        } catch {
            printError(
                "error: \(error)\nUsage: hkd [--listen HOST:PORT] [--data-dir DIR] [--threads N]; see hkd --help")
            return 64
        }
        ServerLog.configure(format: configuration.logFormat, level: configuration.logLevel)
        if let file = configuration.configurationFile {
            ServerLog.info(
                file.wasRead
                    ? "settings from \(file.path)"
                    : "no configuration file at \(file.path) (--config-if-present): flags, HKD_ variables and defaults")
        }
        do {
            // Block the termination signals before any thread starts, so only the waiting main thread gets them;
            // and SIGPIPE in every thread, so that a peer gone mid-write is an error to handle, not the end.
            try SignalSet.termination.block()
            try SignalSet.brokenPipe.block()
        } catch {
            printError("error: cannot block SIGINT, SIGTERM and SIGPIPE: \(error)")
            return 1
        }
        let server: HealthServer
        do {
            // While waiting for JetStream (cluster mode), SIGINT or SIGTERM ends the wait and hkd.
            server = try HealthServer.start(configuration, http: http) { pause in
                (try? SignalSet.termination.wait(timeout: pause)) == nil
            }
        } catch let error as HealthError where error.code == .shuttingDown {
            ServerLog.info("\(error.message); stopped")
            return 0
        } catch {
            ServerLog.error("cannot start: \(error)")
            return 1
        }
        ServerLog.info(
            "\(HealthServer.version) listening on \(configuration.host):\(server.port) (data directory \(configuration.dataDirectory); \(server.cluster.map { "cluster node \($0.options.nodeID)" } ?? "fsync \(configuration.fsync.rawValue)"); \(server.usesTLS ? configuration.tlsClientCA == nil ? "TLS" : "mutual TLS" : "plaintext"))"
        )
        let signal = (try? SignalSet.termination.wait()) ?? SIGTERM
        ServerLog.info("received \(signal == SIGINT ? "SIGINT" : "SIGTERM"), stopping")
        server.stop()
        ServerLog.info("stopped")
        return 0
    }

    private static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
