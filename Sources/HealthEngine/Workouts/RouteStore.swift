import Foundation
import HealthModel

/// The workout routes of every subject (HEALTHKIT.md §13): ``HealthStore/routes``, objects of their own tied to
/// their workouts by UUID.
public typealias RouteStore = ObjectStore<WorkoutRoute>
/// Everything the route store holds (Protocol/STORAGE.md, "Route snapshot").
public typealias RouteImage = ObjectImage<WorkoutRoute>

extension WorkoutRoute: StorableObject {
    public typealias Filter = RouteFilter
    public static var objectName: String { "route" }
    public var conflictDescription: String { "\(points.count) points of workout \(workout)" }
}

extension RouteFilter: ObjectFilter {}
