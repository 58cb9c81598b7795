package dev.lease.micrometer;

import io.micrometer.common.KeyValues;

import dev.lease.micrometer.LeaseObservation.HighCardinalityKeys;
import dev.lease.micrometer.LeaseObservation.LowCardinalityKeys;

/**
 * The {@code lease.acquire} observation as the contract names it: tags {@code lease.name} (as declared),
 * {@code lease.kind}, {@code lease.backend} and {@code outcome}; the evaluated name and the token only as span
 * attributes.
 */
public class DefaultLeaseAcquireObservationConvention implements LeaseAcquireObservationConvention {

    /** The shared instance. */
    public static final DefaultLeaseAcquireObservationConvention INSTANCE = new DefaultLeaseAcquireObservationConvention();

    /** For subclasses and the shared {@link #INSTANCE}. */
    public DefaultLeaseAcquireObservationConvention() {
    }

    @Override
    public String getName() {
        return "lease.acquire";
    }

    @Override
    public String getContextualName(LeaseAcquireContext context) {
        return "lease acquire";
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(LeaseAcquireContext context) {
        return KeyValues.of(LowCardinalityKeys.NAME.withValue(context.getNameTemplate()),
                LowCardinalityKeys.KIND.withValue(context.getKind().name()),
                LowCardinalityKeys.BACKEND.withValue(context.getBackend()),
                LowCardinalityKeys.OUTCOME.withValue(context.getOutcome()));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(LeaseAcquireContext context) {
        KeyValues values = KeyValues.of(HighCardinalityKeys.EVALUATED_NAME.withValue(context.getLeaseName()));
        return context.getToken().isPresent()
                ? values.and(HighCardinalityKeys.TOKEN.withValue(Long.toString(context.getToken().getAsLong())))
                : values;
    }
}
