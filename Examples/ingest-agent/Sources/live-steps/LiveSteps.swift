import Foundation
import AgentSupport
import HealthClient

/// `live-steps [--server HOST:PORT] [--subject NAME] [--token TOKEN]`: today's and the past week's step counts
/// per local day, reprinted on every change; survives server restarts (it says so and resumes).
@main
struct LiveSteps {
    static func main() async throws {
        let options = AgentOptions(CommandLine.arguments.dropFirst())
        let subject = options.subject
        let client = HealthClient(options.configuration(name: "live-steps"))
        defer { client.close() }

        let zone = TimeZone.current
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let today = calendar.startOfDay(for: Date())
        let weekAgo = calendar.date(byAdding: .day, value: -6, to: today)!
        let query = CollectionQuery(
            subject: subject, type: try QuantityType.named("stepCount"),
            filter: SampleFilter(date: DatePredicate(start: weekAgo)), options: .cumulativeSum, anchor: today,
            interval: CalendarInterval(1, .day), timeZone: zone)

        var table = LiveCollectionTable()
        for try await event in client.subscribe(.collection(query)) {
            switch event {
            case .update(let update):
                table.apply(update)
                for day in table.sorted {
                    print(
                        day.startDate.formatted(date: .abbreviated, time: .omitted), Int(day.figures.sum ?? 0),
                        update.unit)
                }
                print("--")
            case .disconnected(let error): print("connection lost (\(error.message)); reconnecting")
            case .reconnected(let reconnection):
                print("back after \(reconnection.downtime), \(reconnection.attempts) attempts")
            }
        }
    }
}
