// HealthClient
