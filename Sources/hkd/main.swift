print("hkd")
