// swift-tools-version:6.0
// hkfuzz: libFuzzer harnesses for every decoder of hkd and hkq (see README.md).
//
// A package of its own because `--sanitize=fuzzer` works only on a package's own executables, and only when
// built with `swift build -c release --sanitize=fuzzer --sanitize=address` from here (Fuzz/run.sh does).
import PackageDescription

let package = Package(
    name: "hkfuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "hkd", path: "..")],
    targets: [
        .executableTarget(
            name: "hkfuzz",
            dependencies: [.product(name: "HealthDecoders", package: "hkd")],
            swiftSettings: [.swiftLanguageMode(.v6)])
    ]
)
