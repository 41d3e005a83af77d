print("hkq")
