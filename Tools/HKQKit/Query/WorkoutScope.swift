import Foundation
import HealthClient
import HealthModel

/// `--workout UUID` of `samples` and `stats`: the samples of one workout, HealthKit's
/// `predicateForObjects(from: workout)` as HEALTHKIT.md §13 reproduces it (``SampleFilter/objects(from:among:)``).
enum WorkoutScope {
    /// The option.
    static let spec = OptionSpec.option(
        "workout", value: "uuid",
        help: "Only the samples of this workout: within its interval, from its source or device (hkq workouts).")

    /// `filter` narrowed to the samples of `type` belonging to the `--workout` given (unchanged without one):
    /// dates within both, sources among both. An unknown workout is an error naming it.
    static func narrow(
        _ filter: SampleFilter, type: QuantityType, context: CommandContext, client: HealthClient
    ) async throws -> SampleFilter {
        guard let text = context.arguments.value("workout") else { return filter }
        guard let uuid = UUID(uuidString: text.trimmingWhitespace) else {
            throw context.usageError("invalid UUID '\(text)' for '--workout'; expected 8-4-4-4-12 hex digits")
        }
        let subject = context.globals.subject
        guard let workout = try await client.workout(uuid, subject: subject) else {
            throw HealthError(.invalidArgument, "no workout \(uuid.uuidString) for subject \"\(subject)\"")
        }
        let own = try await client.filter(ofSamples: type.identifier, in: workout, subject: subject)
        var narrowed = filter
        narrowed.date.start = max(filter.date.start ?? own.date.start!, own.date.start!)
        narrowed.date.end = min(filter.date.end ?? own.date.end!, own.date.end!)
        narrowed.date.strictStartDate = true
        narrowed.date.strictEndDate = true
        narrowed.sources = filter.sources.map { $0.intersection(own.sources!) } ?? own.sources
        return narrowed
    }
}
