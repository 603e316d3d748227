<?php
use PHPUnit\Framework\TestCase;

final class FailTest extends TestCase
{
    public function testAdd(): void
    {
        $this->assertSame(5, 2 + 2);
    }

    public function testOk(): void
    {
        $this->assertTrue(true);
    }
}
