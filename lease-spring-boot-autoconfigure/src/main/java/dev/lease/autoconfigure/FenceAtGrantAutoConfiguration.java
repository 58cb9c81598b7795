package dev.lease.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

import dev.lease.fence.Fence;
import dev.lease.spi.GrantFence;

/**
 * Fence at grant ({@code @Leased(fence = ...)}) through the application's {@link Fence} bean: the engine advances
 * the fence of the named resource right after each grant. {@code JdbcFence}, the default {@code Fence}, is a
 * {@link GrantFence} itself (it commits the advance in a transaction of its own); any other {@code Fence} bean is
 * adapted here, its {@link Fence#advance} called outside the leased work's transaction, so that a store with
 * transactions should implement {@link GrantFence} too, as {@code JdbcFence} does.
 */
@AutoConfiguration(after = JdbcFenceAutoConfiguration.class)
@ConditionalOnClass(Fence.class)
public class FenceAtGrantAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public FenceAtGrantAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean(GrantFence.class)
    @ConditionalOnSingleCandidate(Fence.class)
    GrantFence leaseGrantFence(Fence fence) {
        return fence::advance;
    }
}
