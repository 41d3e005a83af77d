import HKQKit

HKQ.main()
