import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// Prints how long five years of daily New York boundaries take (no assertion on time: timings belong in
/// benchmarks; run `swift test -c release --filter BucketCalendarTimingTests` for meaningful numbers).
@Suite struct BucketCalendarTimingTests {
    @Test func fiveYearsOfDailyBoundariesInNewYork() throws {
        let calendar = try BucketCalendar(
            anchor: UTC.at("2020-01-01T05:00:00Z"), interval: .init(1, .day), timeZoneIdentifier: "America/New_York")
        let from = UTC.at("2020-01-01T05:00:00Z")
        let to = UTC.at("2025-01-01T04:59:59Z")
        _ = try calendar.boundaries(from: from, to: to)  // the first call pays Foundation's zone loading
        let rounds = 200
        let clock = ContinuousClock()
        var count = 0
        let elapsed = try clock.measure {
            for _ in 0..<rounds { count += try calendar.boundaries(from: from, to: to).count }
        }
        #expect(count == rounds * 1827)
        let perCall = elapsed / rounds
        print("BucketCalendar: 1827 daily New York boundaries (5 years) in \(perCall) per call")
    }
}
