import Foundation
import HealthModel
import HealthWire
import Testing

@testable import HKQKit

/// `--format chart` draws every figure asked for, one chart each, fitted to `COLUMNS` or the terminal's width.
@Suite struct ChartTests {
    static let utc = TimestampFormatter(timeZone: TimeZone(identifier: "UTC")!)

    static func report(_ options: StatisticsOptions) -> CollectionReport {
        let day = Micros.day
        let result = CollectionResult(
            unit: "count/min",
            buckets: [
                Statistics(start: 0, end: day, figures: StatisticsFigures(average: 60, minimum: 50, maximum: 90)),
                Statistics(start: day, end: 2 * day, figures: StatisticsFigures()),
                Statistics(
                    start: 2 * day, end: 3 * day, figures: StatisticsFigures(average: 72, minimum: 55, maximum: 180)),
            ])
        return CollectionReport(result: result, options: options, times: utc, format: .chart, subDay: false)
    }

    @Test func everyFigureAskedForIsDrawnInItsOwnChart() {
        let text = Self.report([.discreteAverage, .discreteMin, .discreteMax]).chart(width: 60)
        let charts = text.components(separatedBy: "\n\n")
        #expect(charts.count == 3, "\(text)")
        #expect(
            charts.map { $0.prefix(while: { $0 != "\n" }) } == [
                "average (count/min), 3 buckets", "minimum (count/min), 3 buckets", "maximum (count/min), 3 buckets",
            ])
        let maximum = charts[2].split(separator: "\n").map(String.init)
        // 60 - 10 (date) - 3 (value) - 2 spaces = 45 columns of bar for the largest maximum, 180.
        #expect(maximum[3] == "1970-01-03 " + String(repeating: "█", count: 45) + " 180")
        #expect(maximum[1].hasSuffix("  90") && maximum[2].hasSuffix("   -"))
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 60 })
    }

    @Test func instantsAreNotDrawnAndDurationsPrintAsDurations() {
        let day = Micros.day
        let figures = StatisticsFigures(
            mostRecent: MostRecent(value: 5, start: 0, end: 10), duration: 2 * Micros.hour + 5 * Micros.minute)
        let result = CollectionResult(unit: "count", buckets: [Statistics(start: 0, end: day, figures: figures)])
        let report = CollectionReport(
            result: result, options: [.mostRecent, .duration], times: Self.utc, format: .chart, subDay: false)
        let charts = report.chart(width: 40).components(separatedBy: "\n\n")
        #expect(charts.count == 2)
        #expect(charts[0].hasPrefix("mostRecent (count), 1 bucket\n"))
        #expect(charts[1].hasPrefix("duration, 1 bucket\n"), "\(charts[1])")
        #expect(charts[1].hasSuffix(" 2h 05m\n"))
    }

    @Test(arguments: [30, 80, 132])
    func linesFitTheWidth(width: Int) {
        let lines = Self.report([.discreteAverage, .discreteMax]).chart(width: width).split(separator: "\n")
        let bucketLines = lines.filter { $0.hasPrefix("1970-") }
        #expect(bucketLines.count == 6)
        #expect(bucketLines.allSatisfy { $0.count == max(width, 10 + 10 + 4 + 2) }, "\(lines)")
    }

    @Test func theWidthIsColumnsElseTheTerminalsElse80() {
        func context(_ environment: [String: String], terminal: TerminalSize?) -> CommandContext {
            CommandContext(
                program: HKQ.standard, commandPath: ["collection"], arguments: ParsedArguments(),
                globals: GlobalOptions(server: .defaultAddress, subject: "me", token: nil, format: .chart),
                environment: environment,
                console: Console(out: CapturedText(), err: CapturedText(), terminal: terminal))
        }
        let terminal = TerminalSize(rows: 40, columns: 100)
        #expect(context([:], terminal: nil).chartWidth == 80)
        #expect(context([:], terminal: terminal).chartWidth == 100)
        #expect(context(["COLUMNS": "57"], terminal: terminal).chartWidth == 57)
        #expect(context(["COLUMNS": "57"], terminal: nil).chartWidth == 57)
        #expect(context(["COLUMNS": "wide"], terminal: nil).chartWidth == 80)
        #expect(context(["COLUMNS": "0"], terminal: terminal).chartWidth == 100)
    }
}

/// hkq draws the charts of a real collection query fitted to `COLUMNS`.
@Suite(.serialized, .liveServer) struct ChartLiveTests {
    @Test func collectionChartsEveryOptionWithinColumns() async throws {
        try await RangeEndTests.insertSteps(subject: "chart-live")
        let live = try #require(LiveServer.current)
        let arguments = [
            "--server", live.address, "--token", live.token, "--subject", "chart-live", "collection", "stepCount",
            "--options", "sum,recent", "--interval", "1d", "--tz", "UTC", "--from", "2024-01-01", "--through",
            "2024-01-03", "--format", "chart",
        ]
        for columns in [40, 120] {
            let run = await runHKQ(arguments, environment: ["COLUMNS": "\(columns)"], program: fixedClockProgram)
            #expect(run.status == 0, "\(run.err)")
            let charts = run.out.components(separatedBy: "\n\n")
            #expect(
                charts.map { $0.prefix(while: { $0 != "\n" }) } == [
                    "sum (count), 3 buckets", "mostRecent (count), 3 buckets",
                ])
            let lines = run.out.split(separator: "\n").filter { $0.hasPrefix("2024-") }
            try #require(lines.count == 6)
            #expect(lines.allSatisfy { $0.count == columns }, "\(run.out)")
            #expect(lines[2].hasSuffix(" 400") && lines[2].contains(String(repeating: "█", count: columns - 16)))
        }
    }
}
