package dev.lease.core;

import dev.lease.spi.LossListener;

/**
 * The loss listener handed to a backend before the lease object exists: a backend may report a loss (a session
 * suspended) while the grant request is still returning, and that report must not be dropped.
 */
final class LossRelay implements LossListener {

    private HeldLease lease;
    private String earlyLoss;

    @Override
    public void leaseLost(String reason) {
        HeldLease target;
        synchronized (this) {
            if (lease == null) {
                if (earlyLoss == null) {
                    earlyLoss = reason;
                }
                return;
            }
            target = lease;
        }
        target.markLost(LossCause.BACKEND_REPORTED, reason);
    }

    void attach(HeldLease target) {
        String loss;
        synchronized (this) {
            lease = target;
            loss = earlyLoss;
        }
        if (loss != null) {
            target.markLost(LossCause.BACKEND_REPORTED, loss);
        }
    }
}
