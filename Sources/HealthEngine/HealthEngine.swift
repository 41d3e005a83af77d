// HealthEngine
