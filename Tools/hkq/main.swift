import HKQKit

HKQ.runAndExit()
