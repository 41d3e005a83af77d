import HealthAPI
import HealthServer

HKDMain.main(http: HealthAPI())
