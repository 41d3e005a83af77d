// HealthImport: reading Apple Health exports.
