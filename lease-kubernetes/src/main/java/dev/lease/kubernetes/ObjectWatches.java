package dev.lease.kubernetes;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;

/**
 * Watches of Lease objects shared by the threads waiting for them: one watch per object while anyone waits, closed
 * when the last waiter leaves. A watch holds a connection and clients allow only a few per host, so a watch per
 * waiting thread would starve the grant requests themselves.
 */
final class ObjectWatches {

    private static final Log log = LogFactory.getLog(ObjectWatches.class);

    private final KubernetesClient client;
    private final String namespace;
    private final Map<String, ObjectWatch> open = new HashMap<>();

    ObjectWatches(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /**
     * Registers a waiter on the object's watch, opening it if nobody watches the object yet.
     *
     * @param resourceVersion the version the waiter last read, or null: a release already seen after it wakes the
     *        waiter at once
     */
    ObjectWatch join(String objectName, String resourceVersion) {
        ObjectWatch watch;
        boolean opener = false;
        synchronized (open) {
            watch = open.get(objectName);
            if (watch == null || watch.broken) {
                watch = new ObjectWatch(objectName);
                open.put(objectName, watch);
                opener = true;
            }
            watch.users++;
        }
        CountDownLatch mine = watch.register(resourceVersion);
        watch.mine.set(mine);
        if (opener) {
            watch.open(resourceVersion);
        }
        return watch;
    }

    void leave(ObjectWatch watch) {
        CountDownLatch mine = watch.mine.get();
        watch.mine.remove();
        watch.unregister(mine);
        boolean last;
        synchronized (open) {
            last = --watch.users == 0;
            if (last) {
                open.remove(watch.objectName, watch);
            }
        }
        if (last) {
            watch.close();
        }
    }

    /** One object's watch and its waiters. */
    final class ObjectWatch implements Watcher<Lease> {

        private final String objectName;
        private final ThreadLocal<CountDownLatch> mine = new ThreadLocal<>();
        private final Set<CountDownLatch> waiters = new HashSet<>();
        /** Guarded by {@code open} of the outer class. */
        private int users;
        private volatile boolean broken;
        /** The resourceVersion of the last release seen, guarded by {@code waiters}. */
        private String lastRelease;
        private Watch watch;

        ObjectWatch(String objectName) {
            this.objectName = objectName;
        }

        private CountDownLatch register(String readVersion) {
            CountDownLatch latch = new CountDownLatch(1);
            synchronized (waiters) {
                if (broken || releasedAfter(readVersion)) {
                    latch.countDown();
                }
                waiters.add(latch);
            }
            return latch;
        }

        /**
         * Whether this watch already delivered a release later than what the joining waiter read (it joined after
         * the event). Only decidable when both versions are numbers (Kubernetes 1.35 and later); otherwise the waiter
         * waits, at worst until its maxWait. Never true for a read newer than the release: that waiter would wake at
         * once, find the lease busy again and come back, again and again.
         */
        private boolean releasedAfter(String readVersion) {
            if (lastRelease == null || readVersion == null) {
                return false;
            }
            try {
                return Long.parseLong(lastRelease) > Long.parseLong(readVersion);
            }
            catch (NumberFormatException opaque) {
                return false;
            }
        }

        private void unregister(CountDownLatch latch) {
            synchronized (waiters) {
                waiters.remove(latch);
            }
        }

        private void open(String resourceVersion) {
            try {
                var resource = client.leases().inNamespace(namespace).withName(objectName);
                Watch opened = resourceVersion != null ? resource.watch(resourceVersion, this) : resource.watch(this);
                synchronized (this) {
                    watch = opened;
                }
            }
            catch (RuntimeException ex) {
                log.debug("Could not watch Lease " + namespace + "/" + objectName + " (" + ex + "); polling instead");
                onClose(null);
            }
        }

        /**
         * Waits until the object is freed or deleted, or {@code until}.
         *
         * @return true when the watch broke: the caller should sleep until {@code until} instead (polling)
         */
        boolean await(long until) throws InterruptedException {
            CountDownLatch latch = mine.get();
            return latch.await(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS) && broken;
        }

        @Override
        public void eventReceived(Action action, Lease lease) {
            boolean free = lease == null || lease.getSpec() == null || lease.getSpec().getHolderIdentity() == null
                    || lease.getSpec().getHolderIdentity().isEmpty();
            if (action == Action.DELETED || free) {
                synchronized (waiters) {
                    lastRelease = lease == null || lease.getMetadata() == null ? null
                            : lease.getMetadata().getResourceVersion();
                    waiters.forEach(CountDownLatch::countDown);
                }
            }
        }

        @Override
        public void onClose(WatcherException cause) {
            synchronized (waiters) {
                broken = true;
                waiters.forEach(CountDownLatch::countDown);
            }
        }

        @Override
        public void onClose() {
            // Closed by us when the last waiter left.
        }

        private void close() {
            Watch opened;
            synchronized (this) {
                opened = watch;
                watch = null;
            }
            if (opened != null) {
                opened.close();
            }
        }
    }
}
