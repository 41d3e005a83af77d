extension RandomAccessCollection where Index == Int {
    /// The first index whose element fails `isBefore`, which must hold for a prefix of the elements and for
    /// none after it (a sorted collection and "less than a key"): a binary search.
    @inline(__always)
    func partitionPoint(_ isBefore: (Element) -> Bool) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if isBefore(self[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
