// HealthPosix
