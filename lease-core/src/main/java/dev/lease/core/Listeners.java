package dev.lease.core;

import java.util.List;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/** The engine's listeners as one, each call guarded: a failing metrics binding must not fail a lease. */
final class Listeners implements LeaseEngineListener {

    private static final Log log = LogFactory.getLog(Listeners.class);

    private final List<LeaseEngineListener> listeners;

    Listeners(List<? extends LeaseEngineListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public Acquisition acquiring(LeaseDescription lease) {
        if (listeners.isEmpty()) {
            return Acquisition.IGNORED;
        }
        List<Acquisition> acquisitions = each(listeners, lease, "acquiring", listener -> listener.acquiring(lease),
                Acquisition.IGNORED);
        return new Acquisition() {
            @Override
            public Runnable granted(OptionalLong token) {
                return whenClosed(lease, each(acquisitions, lease, "granted", acquisition -> acquisition.granted(token),
                        () -> { }));
            }

            @Override
            public void busy() {
                each(acquisitions, lease, "busy", Acquisition::busy);
            }

            @Override
            public void failed(Throwable error) {
                each(acquisitions, lease, "failed", acquisition -> acquisition.failed(error));
            }
        };
    }

    @Override
    public Campaign campaigning(LeaseDescription election) {
        if (listeners.isEmpty()) {
            return Campaign.IGNORED;
        }
        List<Campaign> campaigns = each(listeners, election, "campaigning",
                listener -> listener.campaigning(election), Campaign.IGNORED);
        return new Campaign() {
            @Override
            public Runnable won(OptionalLong token) {
                return whenClosed(election, each(campaigns, election, "won", campaign -> campaign.won(token),
                        () -> { }));
            }

            @Override
            public void stopped() {
                each(campaigns, election, "stopped", Campaign::stopped);
            }
        };
    }

    @Override
    public void renewed(LeaseDescription lease, boolean succeeded) {
        each(listeners, lease, "renewed", listener -> listener.renewed(lease, succeeded));
    }

    @Override
    public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
        each(listeners, lease, "lost", listener -> listener.lost(lease, token, cause));
    }

    /** What each listener asked to run when the lease is closed, each guarded. */
    private static Runnable whenClosed(LeaseDescription lease, List<Runnable> onClose) {
        return () -> each(onClose, lease, "closed", Runnable::run);
    }

    /** What each target answers, or {@code otherwise} for one that throws or answers null. */
    private static <T, R> List<R> each(List<T> targets, LeaseDescription lease, String event, Function<T, R> call,
            R otherwise) {
        return targets.stream().map(target -> guarded(lease, event, () -> call.apply(target), otherwise)).toList();
    }

    private static <T> void each(List<T> targets, LeaseDescription lease, String event, Consumer<T> call) {
        for (T target : targets) {
            guarded(lease, event, () -> {
                call.accept(target);
                return null;
            }, null);
        }
    }

    private static <T> T guarded(LeaseDescription lease, String event, Supplier<T> call,
            T otherwise) {
        try {
            T result = call.get();
            return result != null ? result : otherwise;
        }
        catch (RuntimeException ex) {
            log.debug("A lease listener failed on '" + event + "' of lease '" + lease.name() + "'; ignored", ex);
            return otherwise;
        }
    }
}
