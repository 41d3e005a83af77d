// swift-tools-version:6.0
// Two small agents embedding the client library: `ingest-agent` tails a CSV or JSON-lines file into hkd, and
// `live-steps` follows today's step count live. The dependency names the hkd checkout by path and by the
// package's name, `hkd`, so `package: "hkd"` finds it whatever the checkout's folder is called (SwiftPM otherwise
// knows a path dependency by its folder's name); outside this repository use
// `.package(url: "…/hkd.git", from: "0.1.0")`, known by the URL's last component, `hkd`.
import PackageDescription

let package = Package(
    name: "ingest-agent",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "hkd", path: "../..")],
    targets: [
        .target(
            name: "AgentSupport", dependencies: [.product(name: "HealthClient", package: "hkd")],
            swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(
            name: "ingest-agent", dependencies: ["AgentSupport", .product(name: "HealthClient", package: "hkd")],
            swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(
            name: "live-steps", dependencies: ["AgentSupport", .product(name: "HealthClient", package: "hkd")],
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
