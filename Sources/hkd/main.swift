import HealthServer

HKDMain.main()
