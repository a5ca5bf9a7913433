# Deletes every file of a directory at once, one thread per file, as a
# parallel "cleanup" tool might: cottonbox folds the requests into one ask.
import os
import sys
import threading

d = sys.argv[1]
files = [os.path.join(d, f) for f in sorted(os.listdir(d))]


def remove(path):
    try:
        os.remove(path)
    except OSError as e:
        print(f"cleanup: {path}: {e.strerror}")


threads = [threading.Thread(target=remove, args=(p,)) for p in files]
for t in threads:
    t.start()
for t in threads:
    t.join()
