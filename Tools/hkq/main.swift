import HKQKit

await HKQ.main()
