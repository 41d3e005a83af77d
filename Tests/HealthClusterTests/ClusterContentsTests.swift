import HealthCluster
import HealthEngine
import Testing
import TestSupport

@Suite("Cluster contents")
struct ClusterContentsTests {
    @Test("Each partition counts once, from the node holding it; this node's own figures are its current ones")
    func mergedByHolder() async throws {
        let server = try await NATSServer()
        let bucket = try JetStream(urls: server.url).keyValue(ClusterSetup.settingsBucket)
        let x = ClusterContents(bucket: bucket, node: "x")
        let y = ClusterContents(bucket: bucket, node: "y")
        let steps = { (subjects: Int, samples: Int) in
            StoreContents(subjects: subjects, samplesByType: ["stepCount": samples])
        }
        // y held partitions 0 and 1 when it published; partition 1 has moved to x since.
        try y.publish([0: steps(2, 10), 1: steps(1, 5)])
        try x.publish([2: steps(9, 99)])
        let holders = [0: "y", 1: "x", 2: "x"]
        let mine = [1: steps(1, 7), 2: steps(3, 30)]
        let seenByX = try x.merged(partitions: 4, own: mine) { holders[$0] }
        #expect(seenByX == StoreContents(subjects: 6, samplesByType: ["stepCount": 47]))
        // Seen from y: its own partition 0 now, and x's figures as x published them: partition 2, and nothing yet
        // for partition 1, which counts as empty until x publishes again.
        let seenByY = try y.merged(partitions: 4, own: [0: steps(2, 11)]) { holders[$0] }
        #expect(seenByY == StoreContents(subjects: 11, samplesByType: ["stepCount": 110]))
    }
}
