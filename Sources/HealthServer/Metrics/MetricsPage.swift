import Foundation
import HealthModel
import HealthPosix
import HealthWire

/// The `/metrics` page in Prometheus' text exposition format (version 0.0.4): `# HELP` and `# TYPE` lines, then
/// one sample per line; histograms as cumulative `_bucket{le=…}` lines with `_sum` and `_count`.
struct MetricsPage {
    private var text = ""

    /// The whole page for `server`, read now.
    static func render(_ server: HealthServer) -> String {
        var page = MetricsPage()
        let metrics = server.metrics
        page.metric("hkd_build_info", "gauge", "The hkd version; always 1.", [(["version": ProjectVersion.current], 1)])
        let kinds = metrics.requests.keys.sorted { $0.rawValue < $1.rawValue }
        let requestCounts: [([String: String], Double)] = kinds.map { kind in
            (["kind": kind.name], Double(metrics.requests[kind]!.value))
        }
        page.metric("hkd_requests_total", "counter", "Requests handled, by message kind.", requestCounts)
        let durations: [([String: String], Histogram)] = kinds.map { kind in
            (["kind": kind.name], metrics.requestDurations[kind]!)
        }
        page.histograms(
            "hkd_request_duration_seconds", "Time from dispatch to reply on a worker, by message kind.", durations)
        let errorCounts: [([String: String], Double)] = ErrorCode.allCases.map { code in
            (["code": code.name], Double(metrics.errors[code]!.value))
        }
        page.metric("hkd_errors_total", "counter", "Error replies sent, by code name.", errorCounts)
        page.metric(
            "hkd_ingested_samples_total", "counter", "Samples stored by inserts (duplicates excluded), by type.",
            Self.byType(metrics.ingestedSamples))
        page.metric(
            "hkd_ingested_batches_total", "counter", "Insert batches acknowledged, by type.",
            Self.byType(metrics.ingestedBatches))
        page.metric(
            "hkd_authentication_failures_total", "counter", "Refused hellos and proofs.",
            [([:], Double(metrics.authenticationFailures.value))])
        let tcp = server.listenerStatistics
        page.metric("hkd_connections_open", "gauge", "Connections open now.", [([:], Double(tcp.open))])
        page.metric("hkd_connections_accepted_total", "counter", "Connections accepted.", [([:], Double(tcp.accepted))])
        page.metric(
            "hkd_connections_refused_total", "counter", "Connections refused at the connection limit.",
            [([:], Double(tcp.refused))])
        page.metric(
            "hkd_subscriptions", "gauge", "Live subscriptions now.", [([:], Double(server.subscriptions.count))])
        page.metric(
            "hkd_resident_memory_bytes", "gauge", "Resident memory of the process.",
            [([:], Double(HealthServer.residentBytes()))])
        let info = server.store.info()
        let stored: [([String: String], Double)] = info.samplesByType.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            .map { entry in (["type": entry.key], Double(entry.value)) }
        page.metric("hkd_stored_samples", "gauge", "Samples stored now, by type.", stored)
        page.metric("hkd_subjects", "gauge", "Subjects with stored samples.", [([:], Double(info.subjects))])
        let blocks = server.store.blockResidency()
        page.metric(
            "hkd_block_bytes", "gauge",
            "Bytes of sealed blocks (compressed rows): in memory, or in cold segment files (--memory-limit).",
            [(["place": "memory"], Double(blocks.hotBytes)), (["place": "disk"], Double(blocks.coldBytes))])
        page.metric(
            "hkd_wal_bytes_total", "counter", "Bytes appended to the write-ahead log since start-up.",
            [([:], Double(server.durable.logBytesWritten))])
        if let log = server.durable.logStatistics {
            page.histograms(
                "hkd_wal_fsync_duration_seconds", "Duration of each fsync of the write-ahead log.", [([:], log.fsyncs)])
            page.histograms(
                "hkd_wal_records_per_fsync", "Log records made durable by each fsync (group commit).",
                [([:], log.recordsPerFsync)])
        }
        page.histograms(
            "hkd_snapshot_duration_seconds", "Duration of each snapshot.", [([:], server.durable.snapshotDurations)])
        let age = ContinuousClock.now - server.durable.lastSnapshot.withLock { $0 }
        page.metric(
            "hkd_snapshot_age_seconds", "gauge", "Seconds since the last snapshot finished (or since start-up).",
            [([:], Double(age.components.seconds))])
        page.metric(
            "hkd_log_accepts_changes", "gauge", "1 while the write-ahead log accepts changes, 0 when it cannot.",
            [([:], server.durable.acceptsChanges ? 1 : 0)])
        return page.text
    }

    private static func byType(_ counters: [Counter]) -> [([String: String], Double)] {
        QuantityType.all.compactMap { type in
            let value = counters[type.index].value
            return value == 0 ? nil : (["type": type.identifier], Double(value))
        }
    }

    private mutating func header(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    private mutating func metric(
        _ name: String, _ type: String, _ help: String, _ samples: [([String: String], Double)]
    ) {
        header(name, type, help)
        for (labels, value) in samples { text += "\(name)\(Self.labels(labels)) \(Self.number(value))\n" }
    }

    private mutating func histograms(_ name: String, _ help: String, _ series: [([String: String], Histogram)]) {
        header(name, "histogram", help)
        for (labels, histogram) in series {
            let snapshot = histogram.snapshot
            for (bound, count) in zip(histogram.bounds, snapshot.cumulative) {
                text +=
                    "\(name)_bucket\(Self.labels(labels.merging(["le": Self.number(bound)]) { a, _ in a })) \(count)\n"
            }
            text += "\(name)_bucket\(Self.labels(labels.merging(["le": "+Inf"]) { a, _ in a })) \(snapshot.count)\n"
            text += "\(name)_sum\(Self.labels(labels)) \(Self.number(snapshot.sum))\n"
            text += "\(name)_count\(Self.labels(labels)) \(snapshot.count)\n"
        }
    }

    /// `{a="x",b="y"}` with keys sorted (`le` last, as Prometheus writes it), or nothing without labels.
    private static func labels(_ labels: [String: String]) -> String {
        guard !labels.isEmpty else { return "" }
        let keys = labels.keys.sorted { ($0 == "le" ? 1 : 0, $0) < ($1 == "le" ? 1 : 0, $1) }
        return "{" + keys.map { "\($0)=\"\(escape(labels[$0]!))\"" }.joined(separator: ",") + "}"
    }

    private static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A whole number without a fraction, else the shortest round-tripping decimal.
    private static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
