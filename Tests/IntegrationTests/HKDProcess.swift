import TestSupport

/// The old name of ``TestServer`` (TestSupport's hkd launcher), so tests written against it still compile.
typealias HKDProcess = TestServer
