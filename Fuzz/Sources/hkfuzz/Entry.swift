import Foundation

// libFuzzer's entry points. The executable has no main.swift: libFuzzer supplies `main` and calls these.
//
// HKFUZZ_HARNESS=<name> picks the harness (HKFUZZ_HARNESS=list prints them); HKFUZZ_WRITE_SEEDS=<dir> writes
// every harness's generated seeds to <dir>/<name>/ and exits.

/// Called once before fuzzing: checks the harness name, or lists harnesses, or writes seeds.
@_cdecl("LLVMFuzzerInitialize")
func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    let environment = ProcessInfo.processInfo.environment
    if let directory = environment["HKFUZZ_WRITE_SEEDS"] {
        SeedWriter.write(to: directory)
        exit(0)
    }
    if environment["HKFUZZ_HARNESS"] == "list" {
        // Names padded to the longest, never cut: run.sh reads the first word of each line.
        let width = Harness.all.map(\.name.count).max() ?? 0
        for harness in Harness.all {
            print(harness.name.padding(toLength: width, withPad: " ", startingAt: 0), harness.summary)
        }
        exit(0)
    }
    guard Harness.selected != nil else {
        let names = Harness.all.map(\.name).joined(separator: " ")
        FileHandle.standardError.write(Data("hkfuzz: set HKFUZZ_HARNESS to one of: \(names)\n".utf8))
        exit(2)
    }
    return 0
}

/// Runs the selected harness on one input.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(UnsafeRawBufferPointer(start: data, count: size))
    Harness.selected?.run(&input)
    return 0
}

/// Writes generated seeds, one file per seed, named by index.
enum SeedWriter {
    static func write(to directory: String) {
        for harness in Harness.all {
            let folder = "\(directory)/\(harness.name)"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (index, seed) in harness.seeds().enumerated() {
                _ = FileManager.default.createFile(atPath: "\(folder)/gen-\(index)", contents: Data(seed))
            }
        }
    }
}
