// HealthServer
