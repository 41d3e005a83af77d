extension SampleFilter {
    /// HealthKit's `predicateForObjects(from: workout)` as hkd reproduces it (HEALTHKIT.md §13): exports carry no
    /// association between a workout and its samples, so the samples of the workout's source, or of another
    /// source on the same device, whose interval lies within the workout's (start ≥ workout start, end ≤
    /// workout end). `sources` are the sources a type's samples have (``SourceInfo``s with devices); the filter
    /// names those that qualify by name. With none qualifying the filter names the workout's source alone.
    public static func objects(from workout: Workout, among sources: [SourceInfo]) -> SampleFilter {
        let device = workout.source.device
        var names: Set<String> = [workout.source.name]
        for source in sources where !device.isEmpty && source.device == device { names.insert(source.name) }
        // strictEndDate's end bound is exclusive: one microsecond past the end keeps samples ending with it.
        return SampleFilter(
            date: DatePredicate(
                start: workout.start, end: workout.end + 1, strictStartDate: true, strictEndDate: true),
            sources: names)
    }
}
