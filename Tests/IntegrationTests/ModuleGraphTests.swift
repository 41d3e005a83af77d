import Foundation
import TestSupport
import Testing

/// The module graph Package.swift declares (read with `swift package dump-package`), checked against what each
/// target's files import and against ARCHITECTURE.md's drawing of the layers and its module table.
@Suite("Module graph")
struct ModuleGraphTests {
    /// The package's targets, read once for every test of the suite.
    static let targets = Task { try await PackageTarget.dumped(root: TestFixtures.packageRoot) }

    @Test("every target declares exactly the package's modules its files import")
    func importsMatchDeclaredDependencies() async throws {
        let targets = try await Self.targets.value
        let root = TestFixtures.packageRoot
        var imports: [String: [String: [String]]] = [:]
        for target in targets where target.kind != "system" {
            imports[target.name] = try ModuleGraph.imports(
                ofFilesIn: root.appendingPathComponent(target.directory), excluding: target.excluded)
        }
        let problems = ModuleGraph.importProblems(targets: targets, imports: imports)
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test("ARCHITECTURE.md draws every module above the modules it uses")
    func drawingFollowsTheDependencies() async throws {
        let targets = try await Self.targets.value
        let problems = ModuleGraph.drawingProblems(targets: targets, architecture: try Self.architecture())
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test("ARCHITECTURE.md's module table has a row for every module of the package, and for nothing else")
    func tableListsEveryModule() async throws {
        let targets = try await Self.targets.value
        let problems = ModuleGraph.tableProblems(targets: targets, architecture: try Self.architecture())
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test("the checks name what is missing or misplaced")
    func problemsNameTheModules() {
        let targets = [
            PackageTarget(name: "HealthModel", kind: "regular", directory: "Sources/HealthModel"),
            PackageTarget(
                name: "HealthCodec", kind: "regular", directory: "Sources/HealthCodec", dependencies: ["CZlib"]),
            PackageTarget(name: "CZlib", kind: "system", directory: "Sources/CZlib"),
            PackageTarget(
                name: "HealthCodecTests", kind: "test", directory: "Tests/HealthCodecTests",
                dependencies: ["HealthCodec"]
            ),
        ]
        let imports = [
            "HealthModel": [:],
            "HealthCodec": ["HealthModel": ["Bytes.swift"]],
            "HealthCodecTests": ["HealthCodec": ["ZlibTests.swift"], "Foundation": ["ZlibTests.swift"]],
        ]
        #expect(
            ModuleGraph.importProblems(targets: targets, imports: imports) == [
                "HealthCodec imports HealthModel (Bytes.swift), which Package.swift does not declare among its "
                    + "dependencies",
                "HealthCodec declares CZlib in Package.swift, but none of its files imports it",
            ])

        let architecture = """
            ## Modules

            ```
            core   CZlib   HealthHTTP
                   HealthCodec
                   HealthModel
            ```

            | module | one job | start reading at |
            |---|---|---|
            | `HealthModel` | values | `Sample.swift` |
            | `Sources/HealthWire` | frames | `Frame.swift` |
            """
        #expect(
            ModuleGraph.drawingProblems(targets: targets, architecture: architecture) == [
                "ARCHITECTURE.md's module drawing names HealthHTTP, which is not a module of Package.swift",
                "ARCHITECTURE.md's module drawing has HealthCodec on row 2, not above CZlib (row 1), which it uses",
            ])
        #expect(
            ModuleGraph.tableProblems(targets: targets, architecture: architecture) == [
                "ARCHITECTURE.md's module table has no row for CZlib",
                "ARCHITECTURE.md's module table has no row for HealthCodec",
                "ARCHITECTURE.md's module table names HealthWire, which is not a module of Package.swift",
            ])
    }

    @Test("imports are read from import declarations only")
    func importDeclarations() {
        let source = """
            import Foundation
            @testable import HealthImport
            @_spi(Testing) public import HealthModel
              import struct HealthWire.Welcome
            @Suite("hkq import against hkd") struct Imports {
                /// `hkq import` reads an export.
                let words = ["import", "x"]
            }
            """
        #expect(ModuleGraph.importedModules(in: source) == ["Foundation", "HealthImport", "HealthModel", "HealthWire"])
    }

    static func architecture() throws -> String {
        try String(contentsOf: TestFixtures.packageRoot.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
    }
}

/// A target of Package.swift: its name, its kind (`regular`, `executable`, `test`, `system`), its directory
/// relative to the package root and the names of the targets it depends on.
struct PackageTarget: Sendable, Equatable {
    var name: String
    var kind: String
    var directory: String
    var dependencies: [String] = []
    /// Paths under ``directory`` that are not part of the target.
    var excluded: [String] = []

    /// Whether the target is part of the product rather than of its tests (ARCHITECTURE.md's modules).
    var isModule: Bool { kind != "test" && !directory.hasPrefix("Tests/") }

    /// The package's targets as `swift package dump-package` reports them. The manifest is compiled in a
    /// scratch directory of its own, so the command never waits for the lock of a build in progress.
    static func dumped(root: URL) async throws -> [PackageTarget] {
        let scratch = try TestDirectory(prefix: "hk-dump-package")
        let outcome = try await runChild(
            "/usr/bin/env",
            ["swift", "package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package"])
        guard outcome.status == 0,
            let package = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any],
            let targets = package["targets"] as? [[String: Any]]
        else { throw DumpFailure(printed: outcome.printed) }
        return targets.map { target in
            let name = target["name"] as? String ?? ""
            let kind = target["type"] as? String ?? ""
            let directory = target["path"] as? String ?? (kind == "test" ? "Tests/" : "Sources/") + name
            // Each dependency is an object with one key (`byName`, `target` or `product`) whose array starts with
            // the name.
            let dependencies = (target["dependencies"] as? [Any] ?? []).compactMap { dependency -> String? in
                guard let entry = dependency as? [String: Any], let value = entry.values.first as? [Any] else {
                    return nil
                }
                return value.first as? String
            }
            return PackageTarget(
                name: name, kind: kind, directory: directory, dependencies: dependencies,
                excluded: target["exclude"] as? [String] ?? [])
        }
    }

    struct DumpFailure: Error, CustomStringConvertible {
        var printed: String
        var description: String { "swift package dump-package failed: \(printed)" }
    }
}

/// The checks of the module graph, on values, so that a test can feed them a made-up package.
enum ModuleGraph {
    /// The modules the Swift files under `directory` import (but those under the `excluded` paths), each with
    /// the names of the files importing it.
    static func imports(ofFilesIn directory: URL, excluding excluded: [String] = []) throws -> [String: [String]] {
        var imports: [String: [String]] = [:]
        let files = FileManager.default.enumerator(atPath: directory.path)
        while let file = files?.nextObject() as? String {
            guard file.hasSuffix(".swift"), !excluded.contains(where: { file == $0 || file.hasPrefix($0 + "/") })
            else { continue }
            let source = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for module in importedModules(in: source) {
                imports[module, default: []].append((file as NSString).lastPathComponent)
            }
        }
        return imports
    }

    /// The modules `source` imports: `import M`, `@testable import M`, `public import M`, `import struct M.T`.
    static func importedModules(in source: String) -> [String] {
        var modules: [String] = []
        var rest = source.startIndex..<source.endIndex
        // The lines holding `import`, found by Foundation's search: looking at every line of the package one by
        // one takes seconds in a debug build.
        while let found = source.range(of: "import", range: rest) {
            let line = source.lineRange(for: found)
            if let module = importedModule(String(source[line])) { modules.append(module) }
            rest = line.upperBound..<source.endIndex
        }
        return modules
    }

    /// The module `line` imports; `nil` when it is no import declaration.
    static func importedModule(_ line: String) -> String? {
        let accessLevels: Set<Substring> = ["public", "package", "internal", "fileprivate", "private"]
        let kinds: Set<Substring> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]
        var words = line.split(whereSeparator: \.isWhitespace)[...]
        // An attribute is one word (`@testable`, `@_spi(Name)`); `@Suite("hkq import …")` is no import.
        while let first = words.first,
            (first.hasPrefix("@") && (!first.contains("(") || first.hasSuffix(")"))) || accessLevels.contains(first)
        {
            words = words.dropFirst()
        }
        guard words.first == "import" else { return nil }
        words = words.dropFirst()
        if let kind = words.first, kinds.contains(kind) { words = words.dropFirst() }
        return words.first?.split(separator: ".").first.map(String.init)
    }

    /// Every package module a target imports without declaring it, and every dependency it declares that none of
    /// its files imports. `imports` maps a target to the modules its files import (with those files).
    static func importProblems(targets: [PackageTarget], imports: [String: [String: [String]]]) -> [String] {
        let names = Set(targets.map(\.name))
        var problems: [String] = []
        for target in targets {
            guard let imported = imports[target.name] else { continue }
            let declared = Set(target.dependencies)
            for module in imported.keys.sorted() where names.contains(module) && !declared.contains(module) {
                let files = imported[module, default: []].sorted().joined(separator: ", ")
                problems.append(
                    "\(target.name) imports \(module) (\(files)), which Package.swift does not declare among its "
                        + "dependencies")
            }
            for module in declared.sorted() where imported[module] == nil {
                problems.append("\(target.name) declares \(module) in Package.swift, but none of its files imports it")
            }
        }
        return problems
    }

    /// Where ARCHITECTURE.md's drawing (the first code block under `## Modules`) departs from the package: a
    /// module missing or drawn twice, a name that is no module, a module not drawn above a module it uses.
    static func drawingProblems(targets: [PackageTarget], architecture: String) -> [String] {
        let prefix = "ARCHITECTURE.md's module drawing"
        let lines = modulesSection(of: architecture)
        guard let open = lines.firstIndex(where: { $0.hasPrefix("```") }),
            let close = lines[(open + 1)...].firstIndex(where: { $0.hasPrefix("```") })
        else { return ["\(prefix) is missing: no code block under ## Modules"] }
        let modules = Dictionary(uniqueKeysWithValues: targets.filter(\.isModule).map { ($0.name, $0) })
        var row: [String: Int] = [:]
        var problems: [String] = []
        for (index, line) in lines[(open + 1)..<close].enumerated() {
            let words = line.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init)
            for word in words where looksLikeModule(word) {
                if modules[word] == nil {
                    problems.append("\(prefix) names \(word), which is not a module of Package.swift")
                } else if row[word] != nil {
                    problems.append("\(prefix) draws \(word) twice")
                } else {
                    row[word] = index + 1
                }
            }
        }
        for name in modules.keys.sorted() where row[name] == nil {
            problems.append("\(prefix) lacks \(name)")
        }
        for name in modules.keys.sorted() {
            guard let own = row[name], let module = modules[name] else { continue }
            for used in module.dependencies.sorted() {
                guard let below = row[used], below <= own else { continue }
                problems.append(
                    "\(prefix) has \(name) on row \(own), not above \(used) (row \(below)), which it uses")
            }
        }
        return problems
    }

    /// Where ARCHITECTURE.md's module table departs from the package: a module without a row, or a row naming
    /// something that is no module. A row's first cell names modules in backticks, a path by its last part
    /// (`Tools/HKQKit`).
    static func tableProblems(targets: [PackageTarget], architecture: String) -> [String] {
        let prefix = "ARCHITECTURE.md's module table"
        let lines = modulesSection(of: architecture)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| module |") }) else {
            return ["\(prefix) is missing: no `| module |` header under ## Modules"]
        }
        var listed: Set<String> = []
        for line in lines.dropFirst(header + 2).prefix(while: { $0.hasPrefix("|") }) {
            let cell = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            let quoted = cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            for (index, part) in quoted where index % 2 == 1 {
                listed.insert(String(part.split(separator: "/").last ?? part))
            }
        }
        let modules = Set(targets.filter(\.isModule).map(\.name))
        return modules.subtracting(listed).sorted().map { "\(prefix) has no row for \($0)" }
            + listed.subtracting(modules).sorted().map {
                "\(prefix) names \($0), which is not a module of Package.swift"
            }
    }

    /// The lines of the `## Modules` section, up to the next `## ` heading.
    private static func modulesSection(of architecture: String) -> [Substring] {
        let lines = architecture.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "## Modules") else { return [] }
        let rest = lines[(start + 1)...]
        return Array(rest.prefix(while: { !$0.hasPrefix("## ") }))
    }

    /// Whether a word of the drawing reads as a module name rather than a label (`Health…`, `HKQ…`, `hk…`, a
    /// C module such as `CZlib`).
    private static func looksLikeModule(_ word: String) -> Bool {
        if word.hasPrefix("Health") || word.hasPrefix("HKQ") || word.hasPrefix("hk") { return true }
        let letters = Array(word)
        return letters.count > 2 && letters[0] == "C" && letters[1].isUppercase && letters[2].isLetter
    }
}
