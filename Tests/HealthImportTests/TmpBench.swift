import Foundation
import Testing
@testable import HealthImport
@Test func tmpBench() throws {
    guard let path = ProcessInfo.processInfo.environment["HKIMPORT_BENCH"] else { return }
    for _ in 0..<2 {
        let clock = ContinuousClock()
        var rows = 0
        var summary = ImportSummary()
        let elapsed = try clock.measure {
            summary = try ExportImporter(path: path, subject: "rob").run { rows += $0.count }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let hwm = status.split(separator: "\n").first { $0.hasPrefix("VmHWM") } ?? ""
        print("BENCH \(path): \(summary.recordsSeen) records, \(rows) rows in \(seconds) s = \(Int(Double(summary.recordsSeen) / seconds)) records/s, \(Double(summary.xmlBytes) / seconds / 1e6) MB/s xml; \(hwm)")
    }
}
