// HKQKit
