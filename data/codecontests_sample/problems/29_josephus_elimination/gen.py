def tests():
    public = [
        "7 3\n",
        "5 1\n",
    ]
    private = [
        "1 1\n",  # a single child
        "1 1000000000\n",
        "10 2\n",
        "6 1000000000\n",  # k much larger than n
    ]
    generated = [
        "20000 2\n",
        "25000 12345\n",
        # largest: n = 50 000, huge k
        "50000 1000000000\n",
    ]
    return {"public": public, "private": private, "generated": generated}
