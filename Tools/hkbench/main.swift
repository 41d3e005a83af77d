import Foundation

// Thin main: everything lives in HKBench so commands run outside main-actor top-level code.
exit(HKBench.main(Array(CommandLine.arguments.dropFirst())))
