package dev.lease.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.lease.spi.LeaseBackend;

/** A method added to the SPI must be forwarded too, or every wrapper built on this class hides it from the engine. */
class ForwardingLeaseBackendTest {

    @Test
    void forwardsEveryMethodOfTheSpi() {
        List<String> missing = new ArrayList<>();
        for (Method method : LeaseBackend.class.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())) {
                continue;
            }
            try {
                ForwardingLeaseBackend.class.getDeclaredMethod(method.getName(), method.getParameterTypes());
            }
            catch (NoSuchMethodException ex) {
                missing.add(method.getName());
            }
        }
        assertThat(missing).as("LeaseBackend methods ForwardingLeaseBackend does not forward").isEmpty();
    }
}
