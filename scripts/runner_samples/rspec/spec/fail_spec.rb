RSpec.describe "Broken calc" do
  it "adds" do
    expect(1 + 1).to eq(3)
  end

  it "subtracts" do
    expect(2 - 1).to eq(1)
  end
end
