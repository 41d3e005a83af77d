// The public surface of the client library: `import HealthClient` alone gives an integrator everything it needs.
//
// All of HealthModel (quantity types, units, samples, batches, predicates, statistics, errors) is re-exported;
// from HealthWire only the query and result types a caller builds or reads, never frames, message enums,
// requests or subscription messages (those stay `package`-visible for hkq, hkbench and the tests); from HealthTLS
// the TLS options of ``ClientConfiguration`` and certificate fingerprints.
@_exported import HealthModel
@_exported import enum HealthWire.AdminOperation
@_exported import struct HealthWire.AdminResult
@_exported import struct HealthWire.AuthorizationStatus
@_exported import struct HealthWire.ChangesQuery
@_exported import struct HealthWire.ChangesResult
@_exported import struct HealthWire.CollectionQuery
@_exported import struct HealthWire.CollectionResult
@_exported import enum HealthWire.DeleteSelection
@_exported import struct HealthWire.IdentityInfo
@_exported import struct HealthWire.IdentitySpec
@_exported import struct HealthWire.InsertAck
@_exported import struct HealthWire.PageToken
@_exported import struct HealthWire.ServerInfo
@_exported import struct HealthWire.SessionLimits
@_exported import struct HealthWire.StatisticsResult
@_exported import struct HealthWire.TypeGrant
@_exported import struct HealthWire.Welcome
@_exported import struct HealthTLS.TLSClientOptions
@_exported import struct HealthTLS.CertificateFingerprint
