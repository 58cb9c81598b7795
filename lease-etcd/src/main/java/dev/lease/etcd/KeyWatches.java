package dev.lease.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;

/**
 * Watches for the deletion of lease keys, shared by the threads waiting for them: one etcd watch per key while anyone
 * waits, cancelled when the last waiter leaves. A waiter says up to which revision it has seen the key present; the
 * watch starts after the first waiter's revision, so a deletion between that read and the watch's creation is still
 * delivered (etcd replays the history from the start revision), and a later waiter is woken at once by a deletion the
 * watch saw after its own revision.
 */
final class KeyWatches implements AutoCloseable {

    private final Watch watch;
    private final Map<ByteSequence, KeyWatch> open = new HashMap<>();

    KeyWatches(Watch watch) {
        this.watch = watch;
    }

    /**
     * Blocks until the key is deleted at a revision above {@code seen}, the watch breaks, or {@code maxWait} passes.
     *
     * @param seen a revision at which the key was read present
     * @return true when the wait ended before {@code maxWait}: the key was deleted, or the watch broke
     */
    boolean awaitDeletion(ByteSequence key, long seen, Duration maxWait) throws InterruptedException {
        KeyWatch shared;
        boolean opener = false;
        synchronized (open) {
            shared = open.get(key);
            if (shared == null || shared.broken) {
                shared = new KeyWatch(seen + 1);
                open.put(key, shared);
                opener = true;
            }
            shared.users++;
        }
        CountDownLatch mine = shared.register(seen);
        try {
            if (opener) {
                shared.open(key);
            }
            return mine.await(Math.max(1, maxWait.toMillis()), TimeUnit.MILLISECONDS);
        }
        finally {
            shared.unregister(mine);
            leave(key, shared);
        }
    }

    /** The number of keys watched now; for tests. */
    int watchedKeys() {
        synchronized (open) {
            return open.size();
        }
    }

    private void leave(ByteSequence key, KeyWatch shared) {
        boolean last;
        synchronized (open) {
            last = --shared.users == 0;
            if (last && open.get(key) == shared) {
                open.remove(key);
            }
        }
        if (last) {
            shared.close();
        }
    }

    /** Cancels every watch and wakes their waiters. */
    @Override
    public void close() {
        List<KeyWatch> all;
        synchronized (open) {
            all = new ArrayList<>(open.values());
            open.clear();
        }
        all.forEach(KeyWatch::close);
    }

    private final class KeyWatch implements Watch.Listener {

        /** The first revision the watch reports. */
        final long start;
        /** Guarded by {@code open}. */
        int users;
        volatile boolean broken;
        private final Map<CountDownLatch, Long> waiters = new HashMap<>();
        private long lastDeletion;
        private Watch.Watcher watcher;

        KeyWatch(long start) {
            this.start = start;
        }

        synchronized CountDownLatch register(long seen) {
            CountDownLatch latch = new CountDownLatch(1);
            // A waiter that read the key before the watch's start cannot know what happened in between: it tries again.
            if (broken || lastDeletion > seen || seen + 1 < start) {
                latch.countDown();
            }
            else {
                waiters.put(latch, seen);
            }
            return latch;
        }

        synchronized void unregister(CountDownLatch latch) {
            waiters.remove(latch);
        }

        void open(ByteSequence key) {
            Watch.Watcher created = watch.watch(key, WatchOption.builder().withRevision(start).withNoPut(true).build(),
                    this);
            boolean closeNow;
            synchronized (this) {
                watcher = created;
                closeNow = broken;
            }
            if (closeNow) {
                created.close();
            }
        }

        @Override
        public void onNext(WatchResponse response) {
            long deleted = 0;
            for (WatchEvent event : response.getEvents()) {
                if (event.getEventType() == WatchEvent.EventType.DELETE) {
                    deleted = Math.max(deleted, event.getKeyValue().getModRevision());
                }
            }
            if (deleted > 0) {
                wake(deleted);
            }
        }

        @Override
        public void onError(Throwable error) {
            // A compacted start revision, a lost connection: the waiters try again, and the next waiter opens a new watch.
            breakWatch();
        }

        @Override
        public void onCompleted() {
            breakWatch();
        }

        private synchronized void wake(long deletion) {
            lastDeletion = Math.max(lastDeletion, deletion);
            waiters.entrySet().removeIf(waiter -> {
                if (waiter.getValue() < deletion) {
                    waiter.getKey().countDown();
                    return true;
                }
                return false;
            });
        }

        private synchronized void breakWatch() {
            broken = true;
            waiters.keySet().forEach(CountDownLatch::countDown);
            waiters.clear();
        }

        void close() {
            Watch.Watcher toClose;
            synchronized (this) {
                toClose = watcher;
            }
            breakWatch();
            if (toClose != null) {
                toClose.close();
            }
        }
    }
}
