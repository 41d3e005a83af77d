print("hkbench")
