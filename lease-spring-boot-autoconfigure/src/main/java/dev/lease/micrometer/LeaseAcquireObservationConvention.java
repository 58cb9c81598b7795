package dev.lease.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags {@link LeaseObservation#ACQUIRE} observations. Declare a bean of this type to replace
 * {@link DefaultLeaseAcquireObservationConvention}, for example to add a tag; extending the default keeps the
 * contract's tags.
 */
public interface LeaseAcquireObservationConvention extends ObservationConvention<LeaseAcquireContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof LeaseAcquireContext;
    }
}
