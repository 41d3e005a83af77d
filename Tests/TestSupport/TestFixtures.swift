import Foundation

/// Files the test targets share: the package root, and the real Apple Health export kept in
/// `Tests/Fixtures/apple-health-export-mit/` (MIT licence beside it; see its SOURCE.md).
public enum TestFixtures {
    /// The package root: the first directory above this file holding Package.swift.
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url = url.deletingLastPathComponent()
        }
        return url
    }()

    /// The real export (26,070 records, iOS 11 era, US units).
    public static var realExportPath: String {
        packageRoot.appendingPathComponent("Tests/Fixtures/apple-health-export-mit/export.zip").path
    }
}
