// HealthWire
