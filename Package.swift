// swift-tools-version:6.0
// hkd and hkq: a HealthKit-style health data server and its command-line tool.
//
// Dependencies point one way: ARCHITECTURE.md draws the layers. Each target declares exactly the package's modules
// its files import; ModuleGraphTests checks that, and the drawing, against this file.
import PackageDescription

/// Settings shared by every Swift target: Swift 6 language mode everywhere.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

let package = Package(
    name: "hkd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hkd", targets: ["hkd"]),
        .executable(name: "hkq", targets: ["hkq"]),
        .executable(name: "hkbench", targets: ["hkbench"]),
        .library(name: "HealthClient", targets: ["HealthClient"]),
        // Every module with a decoder of untrusted bytes, for the fuzz harnesses of Fuzz/Package.swift (a package
        // sees only its dependencies' products), and HealthPosix, whose files and stream layers the TLS harness uses.
        .library(
            name: "HealthDecoders",
            targets: [
                "HealthModel", "HealthCodec", "HealthWire", "HealthEngine", "HealthStorage", "HealthImport", "HKQKit",
                "HealthTLS", "HealthPosix", "HealthHTTP",
            ]),
    ],
    targets: [
        // MARK: C shims
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // http-parser 2.9 (libhttp_parser): the HTTP/1.1 request parser of the HTTP listener.
        .systemLibrary(name: "CHTTPParser", path: "Sources/CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        .target(name: "CLinux", path: "Sources/CLinux"),
        // OpenSSL 3 (libssl, libcrypto): a module map and static inline wrappers of its macros.
        .systemLibrary(
            name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // nats.c 3.4 (libnats): a module map and static inline builders of its configuration structs.
        .systemLibrary(
            name: "CNats", path: "Sources/CNats", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),

        // MARK: Pure core (no I/O)
        .target(name: "HealthModel", swiftSettings: swiftSettings),
        .target(name: "HealthCodec", dependencies: ["HealthModel", "CZlib"], swiftSettings: swiftSettings),
        .target(name: "HealthWire", dependencies: ["HealthModel", "HealthCodec"], swiftSettings: swiftSettings),
        .target(name: "HealthEngine", dependencies: ["HealthModel"], swiftSettings: swiftSettings),
        .target(name: "HealthImport", dependencies: ["HealthModel", "HealthCodec"], swiftSettings: swiftSettings),

        // MARK: Systems
        .target(name: "HealthPosix", dependencies: ["CLinux"], swiftSettings: swiftSettings),
        // TLS as a layer between a connection's socket and its handler (server) or over a client socket.
        .target(name: "HealthTLS", dependencies: ["COpenSSL", "HealthPosix"], swiftSettings: swiftSettings),
        // HTTP/1.1 messages: requests parsed by http-parser within caps, responses written; no sockets.
        .target(name: "HealthHTTP", dependencies: ["CHTTPParser"], swiftSettings: swiftSettings),
        // Write-ahead log and snapshots: formats are pure (Format/), file I/O goes through HealthPosix (IO/).
        .target(
            name: "HealthStorage", dependencies: ["HealthModel", "HealthCodec", "HealthEngine", "HealthPosix"],
            swiftSettings: swiftSettings),
        // Cluster mode: partition logs in NATS JetStream streams, leases in its key-value buckets (the only module
        // importing CNats).
        .target(
            name: "HealthCluster",
            dependencies: ["CNats", "HealthModel", "HealthCodec", "HealthEngine", "HealthPosix", "HealthStorage"],
            swiftSettings: swiftSettings),
        .target(
            name: "HealthServer",
            dependencies: [
                "HealthModel", "HealthCodec", "HealthWire", "HealthEngine", "HealthPosix", "HealthStorage", "HealthTLS",
                "HealthCluster", "HealthHTTP",
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "HealthClient",
            dependencies: ["HealthModel", "HealthCodec", "HealthWire", "HealthPosix", "HealthTLS"],
            swiftSettings: swiftSettings),

        // MARK: Executables (thin mains)
        // The HTTP/JSON API: each /v1 resource runs hkq's query command in process against the server's handlers;
        // and the dashboard, static files in Dashboard/ that read /v1 in the browser.
        .target(
            name: "HealthAPI",
            dependencies: [
                "HealthServer", "HKQKit", "HealthHTTP", "HealthClient", "HealthModel", "HealthWire", "HealthPosix",
            ],
            // The dashboard's files, built into hkd as byte arrays (PackageResources), so the one binary serves
            // them wherever it is installed; hkd --dashboard-dir reads them from a directory instead.
            resources: [
                .embedInCode("Dashboard/index.html"), .embedInCode("Dashboard/dashboard.css"),
                .embedInCode("Dashboard/api.js"), .embedInCode("Dashboard/charts.js"),
                .embedInCode("Dashboard/views.js"), .embedInCode("Dashboard/dashboard.js"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(name: "hkd", dependencies: ["HealthServer", "HealthAPI"], swiftSettings: swiftSettings),
        .target(
            name: "HKQKit", dependencies: ["HealthModel", "HealthWire", "HealthClient", "HealthImport", "HealthPosix"],
            path: "Tools/HKQKit",
            swiftSettings: swiftSettings),
        // hkq starts for every command, so its release build is one static executable (the Swift runtime,
        // Foundation with ICU, OpenSSL, zlib and glibc inside): no dynamic loading, no symbol lookups at start
        // (docs/benchmarks-history.md, hkq start-up). The libraries named are those SwiftPM's --static-swift-stdlib adds for
        // Foundation; lld links it (gold repeats glibc's notices about functions a static program should avoid,
        // which Foundation references: mktemp, getpwnam; name lookups still work through glibc's own files and
        // DNS sources).
        .executableTarget(
            name: "hkq", dependencies: ["HKQKit"], path: "Tools/hkq", swiftSettings: swiftSettings,
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-executable", "-use-ld=lld", "-lFoundation", "-lFoundationInternationalization",
                        "-lFoundationEssentials", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims",
                        "-l_FoundationCollections", "-lswiftSynchronization", "-lswiftDispatch",
                    ], .when(configuration: .release))
            ]),
        .executableTarget(
            name: "hkbench",
            dependencies: [
                "HealthModel", "HealthCodec", "HealthWire", "HealthEngine", "HealthClient", "HealthServer",
                "HealthStorage", "HealthPosix",
            ],
            path: "Tools/hkbench", exclude: ["scripts"], swiftSettings: swiftSettings),

        // MARK: Tests
        // What the test targets share: the hkd launcher (TestServer), hkd's connection logic in process
        // (EmbeddedServer), temporary directories, waitUntil, TestSeed and HealthModel's SplitMix64 (re-exported).
        .target(
            name: "TestSupport",
            dependencies: ["HealthModel", "HealthClient", "HealthPosix", "HealthServer", "HealthWire", "HealthEngine"],
            path: "Tests/TestSupport", swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthModelTests", dependencies: ["HealthModel", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthCodecTests", dependencies: ["HealthCodec", "HealthModel", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(name: "HealthHTTPTests", dependencies: ["HealthHTTP"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthWireTests", dependencies: ["HealthWire", "HealthModel", "HealthCodec", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthEngineTests", dependencies: ["HealthEngine", "HealthModel", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthServerTests",
            dependencies: [
                "HealthServer", "HealthModel", "HealthCodec", "HealthWire", "HealthEngine", "HealthPosix",
                "TestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthClientTests", dependencies: ["HealthClient", "HealthWire", "HealthPosix"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthTLSTests", dependencies: ["HealthTLS", "HealthPosix", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthPosixTests", dependencies: ["HealthPosix", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthStorageTests",
            dependencies: [
                "HealthStorage", "HealthModel", "HealthEngine", "HealthCodec", "HealthPosix", "TestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthClusterTests",
            dependencies: [
                "HealthCluster", "HealthModel", "HealthCodec", "HealthStorage", "HealthEngine", "TestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthImportTests", dependencies: ["HealthImport", "HealthModel", "HealthCodec", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HKQKitTests",
            dependencies: ["HKQKit", "HealthModel", "HealthWire", "HealthClient", "HealthImport", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "HealthServer", "HealthClient", "HealthModel", "HealthCodec", "HealthWire", "HealthPosix", "HealthTLS",
                "HealthImport", "HKQKit", "HealthCluster", "HealthAPI", "TestSupport",
            ],
            swiftSettings: swiftSettings),
    ]
)
