import Foundation
import HealthModel
import Testing

@testable import HealthEngine
@testable import HealthStorage

struct ZZColumnDiagnostic {
    @Test func columns() throws {
        guard let dir = ProcessInfo.processInfo.environment["HK_DIAG_DIR"] else { return }
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name.hasSuffix(".snap") {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name)))
            let image = try SnapshotCodec.decode(bytes).image
            var sizes = [Int](repeating: 0, count: 6)
            var rows = 0
            var laned = 0
            for series in image.series {
                for block in series.blocks {
                    rows += block.count
                    let views = block.lanes.isEmpty ? [block] : block.lanes
                    if !block.lanes.isEmpty { laned += 1 }
                    for view in views {
                        let o = view.columnOffsets
                        for c in 0..<5 { sizes[c] += Int(o[2 * c + 1] - o[2 * c]) }
                    }
                    sizes[5] += block.byteCount
                }
            }
            let names = ["starts", "durations", "values", "sources", "arrivals", "whole"]
            print(name, rows, "laned", laned, zip(names, sizes).map { "\($0)=\(String(format: "%.2f", Double($1) / Double(max(rows, 1))))" }.joined(separator: " "))
        }
    }
}
