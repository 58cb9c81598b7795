package dev.lease.aop

import dev.lease.FencingToken
import dev.lease.LeaseKind
import dev.lease.LeaseLostException
import dev.lease.LeaseSpec
import dev.lease.LeaseTemplate
import dev.lease.LeaseUnavailableException
import dev.lease.Leased
import dev.lease.WhenBusy
import dev.lease.core.BackendRouter
import dev.lease.core.LeaseDefaults
import dev.lease.core.LeaseEngine
import dev.lease.leader.LeaderOnly
import dev.lease.memory.InMemoryLeaseBackend
import dev.lease.reactive.ReactiveLeaseContext
import dev.lease.spi.GrantRequest
import dev.lease.spi.LeaseBackend
import dev.lease.spi.ForwardingLeaseBackend
import dev.lease.testing.TestTiming.millis
import dev.lease.testing.TestTiming.seconds
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.BeanCreationException
import org.springframework.beans.factory.ObjectProvider
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import java.time.Duration
import java.util.Optional
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.toKotlinDuration

/**
 * Kotlin `suspend` functions under `@Leased` and `@LeaderOnly`, through the advisors of a plain Spring context on the
 * in-memory backend: acquired when called, without blocking the caller's thread; released on return, throw and
 * cancellation; the lease in the coroutine; a loss cancels the coroutine and the caller gets [LeaseLostException];
 * `whenBusy = SKIP` returns null; mistakes refused at startup.
 */
class SuspendLeasedMethodsTest {

    @Test
    fun `acquired on the call, the token read in the coroutine, released on return`() {
        context().use { context ->
            val reminders = context.getBean(InvoiceReminders::class.java)
            val mail = context.getBean(RecordingMail::class.java)
            val memory = context.getBean(InMemoryLeaseBackend::class.java)

            val token = runBlocking { reminders.remind(42) }

            assertThat(token.value()).isEqualTo(memory.lastToken("invoice-42").asLong)
            assertThat(mail.sent).containsExactly(Sent(42, token, listOf("invoice-42"), token))
            assertThat(held(context)).`as`("released before the call returned").isEmpty()
        }
    }

    @Test
    fun `released when the function throws, and the caller gets its exception`() {
        context().use { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            assertThatThrownBy { runBlocking { jobs.failing() } }
                .isInstanceOf(IllegalStateException::class.java).hasMessage("boom")
            assertThat(held(context)).isEmpty()
        }
    }

    @Test
    fun `released, and the coroutine cancelled, when the caller is cancelled`() {
        context().use { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val probe = context.getBean(Probe::class.java)
            runBlocking {
                val call = launch { jobs.importing() }
                withTimeout(seconds(30).toKotlinDuration()) {
                    while (probe.ticks.get() == 0) {
                        delay(10)
                    }
                }
                assertThat(held(context)).containsExactly("import")
                call.cancelAndJoin()
            }
            await().atMost(seconds(30)).untilTrue(probe.importCancelled)
            await().atMost(seconds(30)).until { held(context).isEmpty() }
        }
    }

    /**
     * Cancelling the caller cancels the coroutine, but blocking work it runs (here in `withContext(Dispatchers.IO)`,
     * ignoring the interrupt) goes on: another instance must not get the lease meanwhile. Kept for the rest of its
     * validity, then released.
     */
    @Test
    fun `a cancelled call keeps its lease while its blocking work still runs`() {
        context().use { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val probe = context.getBean(Probe::class.java)
            val memory = context.getBean(InMemoryLeaseBackend::class.java)
            val other = LeaseEngine(BackendRouter.of(mapOf(LeaseKind.CORRECTNESS to memory)), LeaseDefaults.standard())
            try {
                runBlocking {
                    val call = launch(Dispatchers.Default) { jobs.export() }
                    assertThat(probe.exportStarted.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                        .`as`("the blocking work started").isTrue()
                    call.cancelAndJoin()
                }
                // Tried for less than the validity left at the cancel (at least two thirds of the 6 s ttl).
                val taken = other.tryAcquire(LeaseSpec.of("export", LeaseKind.CORRECTNESS)
                    .withWaitFor(Duration.ofSeconds(1)))
                taken.ifPresent { it.close() }
                assertThat(taken).`as`("another instance got the lease while the work ran").isEmpty()
                assertThat(probe.exportEnded.count).`as`("the cancelled work still runs").isOne()

                probe.exportMayEnd.countDown()
                assertThat(probe.exportEnded.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isTrue()
                other.acquire(LeaseSpec.of("export", LeaseKind.CORRECTNESS).withWaitFor(seconds(40))).use { next ->
                    assertThat(next.isValid()).`as`("released at the end of its validity").isTrue()
                }
            } finally {
                probe.exportMayEnd.countDown()
                other.close()
            }
        }
    }

    /** Remove the cancellation on loss (the takeUntilOther in ReactiveLeaseTemplate.guarded) and this one fails. */
    @Test
    fun `a loss cancels the coroutine and the caller gets LeaseLostException`() {
        context().use { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val probe = context.getBean(Probe::class.java)
            val outcome = runBlocking {
                val call = async { runCatching { jobs.importing() } }
                withTimeout(seconds(30).toKotlinDuration()) {
                    while (probe.ticks.get() < 3) {
                        delay(10)
                    }
                }
                assertThat(context.getBean(InMemoryLeaseBackend::class.java).revoke("import")).isTrue()
                withTimeout(LOSS_BOUND.toKotlinDuration()) { call.await() }
            }

            assertThat(outcome.exceptionOrNull()).isInstanceOf(LeaseLostException::class.java)
                .hasMessageContaining("import").hasMessageContaining("revoked")
            assertThat(probe.importCancelled).`as`("the coroutine was cancelled").isTrue()
            val after = probe.ticks.get()
            await().pollDelay(millis(200)).atMost(seconds(30)).until { probe.ticks.get() == after }
            await().atMost(seconds(30)).until { held(context).isEmpty() }
        }
    }

    @Test
    fun `a busy lease skips with null or throws`() {
        context().use { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val probe = context.getBean(Probe::class.java)
            val engine = context.getBean(LeaseEngine::class.java)
            engine.acquire(LeaseSpec.of("nightly", LeaseKind.EFFICIENCY)).use {
                assertThat(runBlocking { jobs.nightly() }).isNull()
                assertThat(probe.nightlyRan).`as`("skipped while busy").isFalse()
            }
            assertThat(runBlocking { jobs.nightly() }).isEqualTo("ran")

            engine.acquire(LeaseSpec.of("busy", LeaseKind.EFFICIENCY)).use {
                assertThatThrownBy { runBlocking { jobs.busy() } }
                    .isInstanceOf(LeaseUnavailableException::class.java).hasMessageContaining("busy")
            }
        }
    }

    /**
     * With one thread for the caller's coroutines, a call waiting for a busy lease leaves that thread free: another
     * coroutine runs to its end meanwhile, and no store call runs on it.
     */
    @Test
    fun `waiting for a busy lease does not block the caller's dispatcher`() {
        val callers = Executors.newSingleThreadExecutor { task -> Thread(task, "caller-dispatcher") }
        try {
            context().use { context ->
                val jobs = context.getBean(SuspendJobs::class.java)
                val holder = context.getBean(LeaseEngine::class.java).acquire(LeaseSpec.of("queue", LeaseKind.EFFICIENCY))
                val result = runBlocking(callers.asCoroutineDispatcher()) {
                    val waiting = async { jobs.queued() }
                    val other = async { "ran beside the waiting call" }
                    assertThat(withTimeout(seconds(30).toKotlinDuration()) { other.await() })
                        .isEqualTo("ran beside the waiting call")
                    delay(millis(300).toKotlinDuration())
                    assertThat(waiting.isActive).`as`("still waiting for the lease").isTrue()
                    withContext(Dispatchers.IO) { holder.close() }
                    withTimeout(seconds(30).toKotlinDuration()) { waiting.await() }
                }
                assertThat(result).isEqualTo("waited")
                assertThat(context.getBean(StoreCallThreads::class.java).threads)
                    .`as`("threads that called the store").isNotEmpty().doesNotContain("caller-dispatcher")
            }
        } finally {
            callers.shutdownNow()
        }
    }

    @Test
    fun `a suspend function returning a Flow holds the lease while the flow is collected`() {
        context().use { context ->
            val jobs = context.getBean(SuspendJobs::class.java)
            val collected = runBlocking { jobs.lines().toList() }
            assertThat(collected).containsExactly("held: [lines]", "held: [lines]")
            assertThat(held(context)).isEmpty()
        }
    }

    @Test
    fun `LeaderOnly runs in the term, returns null off the leader, and is cancelled when the term ends`() {
        context(ReactiveLeasedMethodsTest.LeaderConfig::class.java, SuspendReports::class.java).use { context ->
            val reports = context.getBean(SuspendReports::class.java)
            val probe = context.getBean(Probe::class.java)
            val leadership = context.getBean(SpringLeaderElections::class.java).get("reports")
            await().atMost(seconds(30)).until { leadership.isLeader }

            assertThat(runBlocking { reports.term() }).isEqualTo(leadership.token().orElseThrow())

            val outcome = runBlocking {
                val watching = async { runCatching { reports.watch() } }
                withTimeout(seconds(30).toKotlinDuration()) {
                    while (!probe.watching.get()) {
                        delay(10)
                    }
                }
                leadership.yieldLeadership()
                withTimeout(LOSS_BOUND.toKotlinDuration()) { watching.await() }
            }
            assertThat(outcome.exceptionOrNull()).isInstanceOf(LeaseLostException::class.java)
            assertThat(probe.watchCancelled).isTrue()

            context.stop() // ends the campaign: no longer leader
            assertThat(runBlocking { reports.term() }).isNull()
        }
    }

    @Test
    fun `mistakes are refused at startup`() {
        assertRefused(SkipsNonNull::class.java, "@Leased on suspend SkipsNonNull.nightly() (lease 'nightly')",
            "returns a non-null type", "Long?")
        assertRefused(LeaderNonNull::class.java, "@LeaderOnly on suspend LeaderNonNull.report()", "non-null")
        assertRefused(AsyncSuspend::class.java, "@Leased on suspend AsyncSuspend.run()", "suspend function and is @Async")
        assertRefused(FinalSuspend::class.java, "@Leased on suspend FinalSuspend.run()", "final",
            "declare them open, or apply the kotlin-spring compiler plugin")
        assertRefused(ReturnsFlow::class.java, "@Leased on ReturnsFlow.lines()", "returns Flow",
            "make it a Kotlin suspend function")
    }

    @Test
    fun `without kotlinx-coroutines-reactor a suspend function is refused with what to add`() {
        val method = SkipsNonNull::class.java.declaredMethods.single { it.name == "nightly" }
        assertThatThrownBy { SuspendFunctions.check("@Leased on suspend SkipsNonNull.nightly()", method, false, false) }
            .isInstanceOf(dev.lease.LeaseConfigurationException::class.java)
            .hasMessageContaining("kotlinx-coroutines-reactor").hasMessageContaining("first suspension point")
    }

    private fun assertRefused(bean: Class<*>, vararg fragments: String) {
        assertThatThrownBy { context(ReactiveLeasedMethodsTest.LeaderConfig::class.java, bean).close() }
            .isInstanceOf(BeanCreationException::class.java).rootCause()
            .isInstanceOf(dev.lease.LeaseConfigurationException::class.java)
            .satisfies({ error -> fragments.forEach { assertThat(error.message).contains(it) } })
    }

    private fun context(vararg more: Class<*>) =
        AnnotationConfigApplicationContext(SuspendLeaseConfig::class.java, *more)

    private fun held(context: AnnotationConfigApplicationContext) =
        context.getBean(LeaseEngine::class.java).held().map { it.name() }

    companion object {
        /** The bound the backend contract suite gives the interrupt after a loss (ttl 2s). */
        val LOSS_BOUND: Duration = Duration.ofSeconds(2).multipliedBy(2).plus(seconds(10))
    }
}

/** The engine on the in-memory backend, the threads that call the store recorded, and the services under test. */
@Configuration(proxyBeanMethods = false)
class SuspendLeaseConfig {

    @Bean
    fun memory() = InMemoryLeaseBackend()

    @Bean
    fun storeCalls(memory: InMemoryLeaseBackend) = StoreCallThreads.of(memory)

    @Bean(destroyMethod = "close")
    fun leaseEngine(backend: StoreCallThreads<*>) = LeaseEngine(
        BackendRouter.of(mapOf(LeaseKind.CORRECTNESS to backend, LeaseKind.EFFICIENCY to backend)),
        LeaseDefaults.standard(),
    )

    @Bean
    fun probe() = Probe()

    @Bean
    fun mail(engine: LeaseEngine) = RecordingMail(engine)

    @Bean
    fun reminders(mail: RecordingMail) = InvoiceReminders(mail)

    @Bean
    fun jobs(engine: LeaseEngine, probe: Probe) = SuspendJobs(engine, probe)

    companion object {
        @JvmStatic
        @Bean
        fun leasedAnnotationBeanPostProcessor(leases: ObjectProvider<LeaseTemplate>) =
            LeasedAnnotationBeanPostProcessor(leases)
    }
}

/** Records the threads of grant requests and releases, the calls that block on a store. */
class StoreCallThreads<G : dev.lease.spi.Grant>(target: LeaseBackend<G>) : ForwardingLeaseBackend<G>(target) {

    val threads: MutableList<String> = CopyOnWriteArrayList()

    companion object {
        /** Hides the grant type, which the in-memory backend keeps to its package. */
        fun <G : dev.lease.spi.Grant> of(target: LeaseBackend<G>): StoreCallThreads<*> = StoreCallThreads(target)
    }

    override fun tryAcquire(request: GrantRequest): Optional<G> {
        threads.add(Thread.currentThread().name)
        return super.tryAcquire(request)
    }

    override fun release(grant: G) {
        threads.add(Thread.currentThread().name)
        super.release(grant)
    }
}

/** What the services saw, outside them: a class proxy's own fields are not its target's. */
class Probe {
    val ticks = AtomicInteger()
    val importCancelled = AtomicBoolean()
    val nightlyRan = AtomicBoolean()
    val watching = AtomicBoolean()
    val watchCancelled = AtomicBoolean()
    val exportStarted = CountDownLatch(1)
    val exportMayEnd = CountDownLatch(1)
    val exportEnded = CountDownLatch(1)
}

data class Sent(val invoice: Long, val token: FencingToken, val held: List<String>, val tokenOnAnotherDispatcher: FencingToken)

/** Checks what [InvoiceReminders] promises its mail: sent under the lease, the token visible on any dispatcher. */
class RecordingMail(private val engine: LeaseEngine) : ReminderMail {

    val sent: MutableList<Sent> = CopyOnWriteArrayList()

    override suspend fun send(invoice: Long, token: FencingToken) {
        val elsewhere = withContext(Dispatchers.IO) { ReactiveLeaseContext.token().awaitSingle() }
        sent.add(Sent(invoice, token, engine.held().map { it.name() }, elsewhere))
    }
}

open class SuspendJobs(private val engine: LeaseEngine, private val probe: Probe) {

    @Leased(name = "failing", kind = LeaseKind.CORRECTNESS)
    open suspend fun failing(): String {
        delay(10)
        throw IllegalStateException("boom")
    }

    @Leased(name = "import", kind = LeaseKind.CORRECTNESS, ttl = "2s")
    open suspend fun importing(): Int {
        try {
            while (true) {
                delay(20)
                probe.ticks.incrementAndGet()
            }
        } catch (cancelled: CancellationException) {
            probe.importCancelled.set(true)
            throw cancelled
        }
    }

    @Leased(name = "export", kind = LeaseKind.CORRECTNESS, ttl = "6s")
    open suspend fun export(): String = withContext(Dispatchers.IO) {
        probe.exportStarted.countDown()
        // Blocking work that ignores the interrupt, as much code does.
        var interrupted = false
        while (true) {
            try {
                probe.exportMayEnd.await()
                break
            } catch (ignored: InterruptedException) {
                interrupted = true
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt()
        }
        probe.exportEnded.countDown()
        "exported"
    }

    @Leased(name = "nightly", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
    open suspend fun nightly(): String? {
        probe.nightlyRan.set(true)
        return "ran"
    }

    @Leased(name = "busy", kind = LeaseKind.EFFICIENCY)
    open suspend fun busy(): String = "ran"

    @Leased(name = "queue", kind = LeaseKind.EFFICIENCY, waitFor = "60s")
    open suspend fun queued(): String = "waited"

    @Leased(name = "lines", kind = LeaseKind.EFFICIENCY)
    open suspend fun lines(): Flow<String> = flow {
        repeat(2) {
            emit("held: " + engine.held().map { it.name() })
        }
    }
}

open class SuspendReports(private val probe: Probe) {

    @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
    open suspend fun term(): FencingToken? = ReactiveLeaseContext.token().awaitSingle()

    @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
    open suspend fun watch() {
        probe.watching.set(true)
        try {
            awaitCancellation()
        } catch (cancelled: CancellationException) {
            probe.watchCancelled.set(true)
            throw cancelled
        }
    }
}

open class SkipsNonNull {
    @Leased(name = "nightly", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
    open suspend fun nightly(): Long = 1
}

open class LeaderNonNull {
    @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
    open suspend fun report(): String = "report"
}

open class AsyncSuspend {
    @org.springframework.scheduling.annotation.Async
    @Leased(name = "async", kind = LeaseKind.EFFICIENCY)
    open suspend fun run() = Unit
}

open class FinalSuspend {
    @Leased(name = "final", kind = LeaseKind.EFFICIENCY)
    suspend fun run() = Unit
}

open class ReturnsFlow {
    @Leased(name = "lines", kind = LeaseKind.EFFICIENCY)
    open fun lines(): Flow<String> = flow { emit("escapes the lease") }
}
